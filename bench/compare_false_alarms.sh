#!/usr/bin/env bash
# False alarms of `tbd compare` on this machine: PAIRS pairs of back-to-back
# default runs of the same configuration, each pair compared, verdicts
# counted. Then the noise at each level (process, repetition, iteration),
# estimated from the same runs, which tests/compare_test.cpp's simulation
# uses. Finally a real A/B that must be detected (--threads 1 vs 2).
#
#   bench/compare_false_alarms.sh [build/tbd] [PAIRS=10] [workloads="ncf resnet50"]
#
# KEEP=DIR keeps the result files in DIR and reuses those already there, so
# a changed `tbd compare` can be re-judged on the same runs.
set -euo pipefail
tbd="${1:-build/tbd}"
pairs="${2:-10}"
workloads="${3:-ncf resnet50}"
if [ -n "${KEEP:-}" ]; then
  work="$KEEP"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
# run OUT ARGS...: one `tbd run`, skipped when KEEP already holds its result.
run() {
  local out="$1"
  shift
  [ -s "$out" ] || "$tbd" run "$@" --quiet --out "$out"
}

for w in $workloads; do
  for p in $(seq 1 "$pairs"); do
    for side in a b; do
      run "$work/$w-$p-$side.json" "$w" --scale small --threads 2 $([ "$w" = resnet50 ] && echo --batch-size 8)
    done
    "$tbd" compare "$work/$w-$p-a.json" "$work/$w-$p-b.json" --json > "$work/$w-$p.cmp.json" 2>/dev/null || true
  done
done
run "$work/ab-t1.json" resnet50 --scale small --batch-size 8 --threads 1
run "$work/ab-t2.json" resnet50 --scale small --batch-size 8 --threads 2
"$tbd" compare "$work/ab-t2.json" "$work/ab-t1.json" --ab > "$work/ab.txt" 2>&1 || true

python3 - "$work" "$pairs" $workloads <<'PY'
import json, math, statistics as st, sys
work, pairs, workloads = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'workload':<10} {'pairs':>5} {'slower':>6} {'faster':>6} {'no change':>9} {'inconcl.':>8}"
      f" {'process sd':>10} {'rep sd':>7} {'iter sd':>7}")
for w in workloads:
    verdicts = [json.load(open(f"{work}/{w}-{p}.cmp.json"))["runs"][0]["verdict"] for p in range(1, pairs + 1)]
    runs = [json.load(open(f"{work}/{w}-{p}-{s}.json")) for p in range(1, pairs + 1) for s in "ab"]
    # Log time per sample: per iteration, per repetition (mean of its iterations), per process.
    proc_means, rep_within, iter_within = [], [], []
    for r in runs:
        secs, samples, reps = r["iterations"], r["iteration_samples"], r["iteration_repetitions"]
        by_rep = {}
        for t, n, k in zip(secs, samples, reps):
            by_rep.setdefault(k, []).append(math.log(t / n))
        rep_means = [st.mean(v) for v in by_rep.values()]
        proc_means.append(st.mean(rep_means))
        rep_within.append(st.variance(rep_means))
        iter_within.extend(st.variance(v) for v in by_rep.values() if len(v) > 1)
    n_iter = len(runs[0]["iterations"]) // len(set(runs[0]["iteration_repetitions"]))
    n_rep = len(set(runs[0]["iteration_repetitions"]))
    var_e = st.mean(iter_within)
    var_r = max(0.0, st.mean(rep_within) - var_e / n_iter)
    var_p = max(0.0, st.variance(proc_means) - st.mean(rep_within) / n_rep)
    count = lambda v: sum(x == v for x in verdicts)
    print(f"{w:<10} {pairs:>5} {count('slower'):>6} {count('faster'):>6} {count('no significant change'):>9}"
          f" {count('inconclusive'):>8} {math.sqrt(var_p):>10.4f} {math.sqrt(var_r):>7.4f} {math.sqrt(var_e):>7.4f}")
print("(sd of log time per sample at each level, from nested variances; process sd > 0 only where processes differ beyond their repetitions)")
print()
print("A/B, resnet50 small, --threads 2 (base) against --threads 1 (new):")
print(open(f"{work}/ab.txt").read())
PY
