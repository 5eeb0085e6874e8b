# --grad-accum N: N micro-batches per optimizer step. An iteration counts the
# samples of all of them, the result and the summary give the global batch,
# MLPerf's log says gradient_accumulation_steps, and a data-parallel run
# all-reduces once per step, not once per micro-batch (comm probe).
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --repeat 1 --iters 2 --warmup 1)

# Two ranks, a bucket small enough for many all-reduces per step: the same
# count, bytes and one synchronisation per iteration with 4 micro-batches as with 1.
for n in 1 4; do
  expect_exit 0 "distributed +2 ranks" -- run resnet50 "${tiny[@]}" --batch-size 4 --nproc 2 --set bucket_mb=0.01 --probes time,comm \
    --grad-accum $n --out "$WORK/dp$n.json"
done
json_check "$WORK/dp1.json" 'r["comm"]["allreduces_per_iteration"] > 2 and r["comm"]["synchronisations_per_iteration"] == 1'
json_check "$WORK/dp4.json" 'r["comm"]["synchronisations_per_iteration"] == 1'
python3 - "$WORK/dp1.json" "$WORK/dp4.json" <<'PY' || fail "--grad-accum 4 changed the all-reduces per iteration"
import json, sys
one, four = (json.load(open(p))["comm"] for p in sys.argv[1:])
assert four["allreduces_per_iteration"] == one["allreduces_per_iteration"], (one, four)
assert four["bytes_per_iteration"] == one["bytes_per_iteration"], (one, four)
PY
# The iteration is the optimizer step: 4 micro-batches of 4 images per rank.
json_check "$WORK/dp4.json" 'r["workload"]["batch"] == {"micro_batch": 4, "grad_accum": 4, "ranks": 2, "global_batch": 32, "unit": "images"}'
json_check "$WORK/dp4.json" 'r["distributed"]["global_batch_size"] == 32 and all(n == 16 for n in r["iteration_samples"])'

# One process: the summary line spells the arithmetic out; the MLPerf log records it.
out="$("$TBD" run ncf "${tiny[@]}" --batch-size 8 --grad-accum 3 --mllog "$WORK/accum.mllog" 2>&1)" || fail "ncf --grad-accum 3 failed: $out"
echo "$out" | grep -q "batch 8 × 3 accum × 1 rank = 24 " || fail "the summary lacks the batch arithmetic: $out"
grep -q '"key": "gradient_accumulation_steps", "value": 3' "$WORK/accum.mllog" || fail "the log's gradient_accumulation_steps is not 3"
grep -q '"key": "global_batch_size", "value": 24' "$WORK/accum.mllog" || fail "the log's global batch is not 8 x 3"
grep -q '"key": "micro_batch_size", "value": 8' "$WORK/accum.mllog" || fail "the log's micro batch is not 8"

# Refusals and bad values: usage errors (exit 2) that say why.
expect_exit 2 "wgan does not accumulate gradients \(--grad-accum 2\): .*two models" -- run wgan --scale tiny --grad-accum 2
expect_exit 2 "a3c does not accumulate gradients \(--grad-accum 2\): .*hogwild" -- run a3c --scale tiny --grad-accum 2
expect_exit 2 "--grad-accum: must be at least 1, got '0'" -- run ncf --grad-accum 0
expect_exit 2 "--grad-accum: must be a whole number" -- run ncf --grad-accum 1.5

finish
