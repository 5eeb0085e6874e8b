#!/usr/bin/env bash
# Grades `tbd predict --nproc 2 --embedding-sharding P --check` for dlrm's
# production-shape configurations (docs/workloads.md#dlrm): for each config
# a single-process base at small scale, then each placement predicted from it
# and run (the check), one line per prediction: predicted / measured global
# samples/s and the error. Run it on a quiet machine; the figures move with
# the machine's noise, so grade on two occasions.
#
#   bench/embedding_grading.sh build/tbd ["rm1 rm2 rm3 dcnv2"] ["table row"]
# KEEP=DIR keeps the bases and the predictions there.
set -euo pipefail
TBD=${1:?usage: bench/embedding_grading.sh path/to/tbd [configs] [placements]}
CONFIGS=${2:-rm1 rm2 rm3 dcnv2}
PLACEMENTS=${3:-table row}
WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
echo "config placement predicted measured error placed_ms whole_ms ($(date -u +%H:%M) UTC, $WORK)"
for c in $CONFIGS; do
  "$TBD" run dlrm --scale small --set config="$c" --batch-size 512 --threads 1 --repeat 3 --iters 5 \
    --probes time,gradients --json >"$WORK/$c.json" 2>"$WORK/$c.err"
  for p in $PLACEMENTS; do
    "$TBD" predict "$WORK/$c.json" --nproc 2 --embedding-sharding "$p" --check --dir "$WORK/$c-$p" --json \
      >"$WORK/$c-$p.json" 2>"$WORK/$c-$p.err"
    python3 - "$WORK/$c-$p.json" "$c" "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = next(x for x in d["predictions"] if x["kind"] == "data_parallel")
m = p["check"]["measured_global_samples_per_s"] if "measured_global_samples_per_s" in p["check"] else None
err = p["check"].get("error")
lk = p.get("measured_here", {}).get("placed_lookups", {})
print(sys.argv[2], sys.argv[3], round(p["global_samples_per_s"]), m if m is None else round(m),
      "n/a" if err is None else f"{100 * err:+.1f}%", round(1e3 * lk.get("placed_s", float("nan")), 2),
      round(1e3 * lk.get("replicated_s", float("nan")), 2))
PY
  done
done
echo "done $(date -u +%H:%M) UTC"
