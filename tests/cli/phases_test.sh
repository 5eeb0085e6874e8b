# Phase times in every result (docs/metrics.md#phases): where a timed
# iteration's time went, in ms, adding up to the mean iteration time; a
# data-parallel run's gradient synchronisation as communication.
source "$(dirname "$0")/lib.sh"
quick=(--scale tiny --threads 1 --warmup 1 --iters 3 --repeat 2 --quiet)

"$TBD" run resnet50 "${quick[@]}" --batch-size 2 --out "$WORK/one.json" || fail "the run exited $?"
json_check "$WORK/one.json" 'all(r["phases"][k] > 0 for k in ("forward_ms", "backward_ms", "optimizer_ms")) and r["phases"]["communication_ms"] == 0'
json_check "$WORK/one.json" 'abs(sum(r["phases"][k] for k in ("data_ms", "forward_ms", "backward_ms", "communication_ms", "optimizer_ms", "other_ms")) - r["phases"]["iteration_ms"]) < 1e-6 * r["phases"]["iteration_ms"] + 1e-9'
json_check "$WORK/one.json" 'abs(r["phases"]["iteration_ms"] - 1e3 * r["summary"]["mean_s"]) < 1e-6'
# The backward of resnet50 costs more than its forward (two GEMM-like passes per layer).
json_check "$WORK/one.json" 'r["phases"]["backward_ms"] > r["phases"]["forward_ms"]'

"$TBD" run ncf "${quick[@]}" --nproc 2 --out "$WORK/two.json" || fail "the 2-rank run exited $?"
json_check "$WORK/two.json" 'r["phases"]["communication_ms"] > 0 and r["phases"]["backward_ms"] > 0'

finish
