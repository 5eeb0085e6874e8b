#!/usr/bin/env bash
# Gradient all-reduce overlapped with backward versus after it: resnet50 at
# scale small, 2 local ranks on c10d/Gloo, alternating on/off rounds.
#   bench/dist_overlap.sh [build/tbd] [rounds=3] [iters=5] [batch=8] [threads=1]
set -euo pipefail
tbd="${1:-build/tbd}"
rounds="${2:-3}"
iters="${3:-5}"
batch="${4:-8}"
threads="${5:-1}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "resnet50 small, 2 ranks x $threads thread(s), batch $batch per rank, $rounds rounds of $iters iterations"
printf '%6s %8s %14s %14s %12s %12s\n' round overlap "iter ms" "global img/s" "comm ms" "hidden %"
for r in $(seq 1 "$rounds"); do
  order="on off"
  [ $((r % 2)) -eq 0 ] && order="off on"  # alternate so drift cancels
  for mode in $order; do
    f="$out/$mode-$r.json"
    "$tbd" run resnet50 --scale small --batch-size "$batch" --threads "$threads" --nproc 2 \
      --iters "$iters" --warmup 2 --probes time --dist-overlap "$mode" --quiet --out "$f"
    python3 - "$f" "$r" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%6s %8s %14.1f %14.2f %12.1f %12.0f" % (sys.argv[2], sys.argv[3], 1e3 * r["summary"]["median_s"],
      r["distributed"]["global_samples_per_s"], 1e3 * r["comm"]["allreduce_s_median"], 100 * r["comm"]["hidden_share"]))
PY
  done
done | tee "$out/table"
for mode in on off; do
  printf 'overlap %-3s median iteration %.1f ms\n' "$mode" "$(awk -v m="$mode" '$2 == m {print $3}' "$out/table" | median)"
done
