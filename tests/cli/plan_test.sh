# tbd plan: the memory of a step from the model's shapes, before any run.
# 8B does not fit an 80 GB GPU without sharding (its model state alone is
# 128 GB); 1B at one sequence does; the plan of a small run equals what
# that run's memory probe then measures; bad input is refused with exit 2.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "the model state alone \(119.66 GiB \(128.5 GB\)\) exceeds it" -- \
  plan llama --set size=8b --precision bf16 --device cuda --device-memory 80G --activation-checkpointing full
expect_exit 0 "^  fits: " -- plan llama --set size=1b --precision bf16 --device cuda --device-memory 80G
expect_exit 0 "checkpointed_blocks .*16 blocks" -- \
  plan llama --set size=1b --precision bf16 --device cuda --device-memory 80G --activation-checkpointing full
# --json: a document; the verdict is a boolean, the device memory where it came from.
"$TBD" plan llama --set size=70b --precision bf16 --device cuda --device-memory 141GB --json >"$WORK/70b.json" ||
  fail "tbd plan --json failed"
json_check "$WORK/70b.json" 'r["fits"] is False and r["device_memory"]["source"] == "--device-memory" and r["parameters"] == 70553706496'

# The plan of a small run against the run's own memory probe (peak within 1%).
"$TBD" plan llama --scale small --activation-checkpointing selective=2 --json >"$WORK/small-plan.json" || fail "plan small"
"$TBD" run llama --scale small --activation-checkpointing selective=2 --threads 1 --repeat 1 --iters 1 --warmup 1 \
  --probes memory --quiet --out "$WORK/small-run.json" || fail "run small"
python3 - "$WORK/small-plan.json" "$WORK/small-run.json" <<'PY' || fail "the plan's peak is not the probe's"
import json, sys
plan, run = (json.load(open(p)) for p in sys.argv[1:])
m = run["memory"]
measured = m["peak_bytes"] - m["breakdown"]["inputs"] - m["breakdown"]["other"]
assert abs(plan["peak_bytes"] / measured - 1) < 0.01, (plan["peak_bytes"], measured)
PY

# dlrm: each rank's part of the tables (--nproc N --embedding-sharding P).
# Rank 0's planned peak against its memory probe: rm1 small, replicated on
# one process and split by rows over two (within 10%; docs/workloads.md has
# every configuration and placement).
small=(--scale small --set config=rm1 --batch-size 256)
for placement in replicate row; do
  nproc=$([ "$placement" = row ] && echo 2 || echo 1)
  "$TBD" plan dlrm "${small[@]}" --nproc "$nproc" --embedding-sharding "$placement" --json >"$WORK/dlrm-$placement-plan.json" ||
    fail "plan dlrm $placement"
  "$TBD" run dlrm "${small[@]}" --nproc "$nproc" --embedding-sharding "$placement" --threads 1 --repeat 1 --iters 1 \
    --warmup 1 --probes time,memory --quiet --out "$WORK/dlrm-$placement-run.json" || fail "run dlrm $placement"
  python3 - "$WORK/dlrm-$placement-plan.json" "$WORK/dlrm-$placement-run.json" <<'PY' || fail "dlrm $placement: the plan's peak is not the probe's"
import json, sys
plan, run = (json.load(open(p)) for p in sys.argv[1:])
measured = run["memory"]["peak_bytes"]
assert abs(plan["peak_bytes"] / measured - 1) < 0.10, (plan["peak_bytes"], measured)
tables = next(t["bytes"] for t in plan["model_state"] if t["name"] == "embedding tables")
held = run["workload"]["configuration"].get("embedding_sharding", {}).get("embedding_parameters_held",
                                                                           run["workload"]["configuration"].get("embedding_parameters"))
assert tables == 4 * held, (tables, held)
PY
done
# Two micro-batches: their sparse gradients add up uncoalesced before the step.
"$TBD" plan dlrm "${small[@]}" --grad-accum 2 --json >"$WORK/dlrm-accum-plan.json" || fail "plan dlrm --grad-accum 2"
"$TBD" run dlrm "${small[@]}" --grad-accum 2 --threads 1 --repeat 1 --iters 1 --warmup 1 --probes time,memory --quiet \
  --out "$WORK/dlrm-accum-run.json" || fail "run dlrm --grad-accum 2"
python3 - "$WORK/dlrm-accum-plan.json" "$WORK/dlrm-accum-run.json" "$WORK/dlrm-replicate-plan.json" <<'PY' || fail "dlrm --grad-accum 2: the plan's peak is not the probe's"
import json, sys
plan, run, one = (json.load(open(p)) for p in sys.argv[1:])
assert abs(plan["peak_bytes"] / run["memory"]["peak_bytes"] - 1) < 0.10, (plan["peak_bytes"], run["memory"]["peak_bytes"])
grads = lambda p: next(t["bytes"] for t in p["transients"] if t["name"] == "sparse table gradients")
assert grads(plan) == 2 * grads(one), (grads(plan), grads(one))
PY
# Placed, the ranks' tables add up to the replicated ones; dcnv2's Adagrad doubles them.
python3 - "$TBD" <<'PY' || fail "dlrm plans: the ranks' tables do not add up"
import json, subprocess, sys
def plan(*args):
    out = subprocess.run([sys.argv[1], "plan", "dlrm", "--json", *args], check=True, capture_output=True, text=True).stdout
    return {t["name"]: t["bytes"] for t in json.loads(out)["model_state"]}
whole = plan("--set", "config=dcnv2")
row = plan("--set", "config=dcnv2", "--nproc", "4", "--embedding-sharding", "row")
assert abs(4 * row["embedding tables"] / whole["embedding tables"] - 1) < 1e-6, (row, whole)
assert whole["table optimizer state"] == whole["embedding tables"]
assert "table optimizer state" not in plan("--set", "config=rm2")
PY
expect_exit 0 "rank 0 of 8, tables table" -- plan dlrm --set config=dcnv2 --nproc 8 --embedding-sharding table
expect_exit 0 "place the tables across ranks" -- plan dlrm --set config=dcnv2 --device-memory 80G

# Sharded data parallelism (--sharding, ZeRO): rank 0's plan of a small
# two-rank run against what that run measured: its model state per rank
# (distributed.sharding, from the tensors it holds) within 1%, its peak
# (the memory probe's, less the batch's ids and "other") within 5%.
for s in gradients full; do
  "$TBD" plan llama --scale small --nproc 2 --sharding "$s" --json >"$WORK/llama-$s-plan.json" || fail "plan llama $s"
  "$TBD" run llama --scale small --nproc 2 --sharding "$s" --threads 1 --repeat 1 --iters 1 --warmup 1 \
    --probes memory --quiet --out "$WORK/llama-$s-run.json" || fail "run llama --sharding $s"
  python3 - "$WORK/llama-$s-plan.json" "$WORK/llama-$s-run.json" <<'PY2' || fail "llama --sharding $s: the plan is not the run's"
import json, sys
plan, run = (json.load(open(p)) for p in sys.argv[1:])
held = run["distributed"]["sharding"]["model_state_bytes_per_rank"]["total"]
assert abs(plan["model_state_bytes"] / held - 1) < 0.01, (plan["model_state_bytes"], held)
m = run["memory"]
measured = m["peak_bytes"] - m["breakdown"]["inputs"] - m["breakdown"]["other"]
assert abs(plan["peak_bytes"] / measured - 1) < 0.05, (plan["peak_bytes"], measured)
assert plan["workload"]["ranks"] == 2 and plan["workload"]["sharding"] == sys.argv[1].split("-")[-2]
PY2
done
# A world larger than the local launcher starts (--nproc up to 65,536):
# a plan starts no ranks.
expect_exit 0 "rank 0 of 4096, --sharding full" -- \
  plan llama --set size=8b --precision bf16 --device cuda --activation-checkpointing full --device-memory 80G \
  --nproc 4096 --sharding full
expect_exit 2 "--nproc must be in \\[1, 65536\\]" -- plan llama --nproc 70000 --sharding full
# 8B on 64 ranks of 80 GB: replicated it does not fit, fully sharded it does;
# the fewest ranks per strategy are powers of two, ZeRO-3 needing the fewest.
expect_exit 0 "rank 0 of 64, --sharding full \(ZeRO-3\)" -- \
  plan llama --set size=8b --precision bf16 --device cuda --activation-checkpointing full --device-memory 80G \
  --nproc 64 --sharding full
"$TBD" plan llama --set size=8b --precision bf16 --device cuda --activation-checkpointing full --device-memory 80G \
  --nproc 64 --sharding full --json >"$WORK/8b-64.json" || fail "plan 8b on 64 ranks"
json_check "$WORK/8b-64.json" 'r["fits"] is True and r["fewest_ranks_that_fit"]["none"] is None and r["fewest_ranks_that_fit"]["full"] <= r["fewest_ranks_that_fit"]["gradients"] <= r["fewest_ranks_that_fit"]["optimizer"] and r["fewest_ranks_that_fit"]["full"] <= 64'
expect_exit 0 "fewest ranks that fit" -- \
  plan llama --set size=8b --precision bf16 --device cuda --activation-checkpointing full --device-memory 80G
expect_exit 0 "rank 0 of 2, replicated" -- plan llama --nproc 2
expect_exit 2 "add --nproc N" -- plan llama --sharding full
expect_exit 2 "fp16" -- plan llama --nproc 2 --sharding full --precision fp16
expect_exit 2 "does not run data-parallel" -- plan a3c --nproc 2
expect_exit 2 "cannot shard its model state" -- plan dlrm --nproc 2 --sharding gradients
expect_exit 2 "has no embedding tables to place across ranks" -- plan ncf --nproc 2 --embedding-sharding row

# Bad input: exit 2 and a reason.
expect_exit 2 "no shape model of resnet50.*--probes memory" -- plan resnet50
expect_exit 2 "unknown workload" -- plan nosuch
expect_exit 2 "device-memory" -- plan llama --device-memory lots
expect_exit 2 "size" -- plan llama --set size=13b
expect_exit 2 "activation-checkpointing" -- plan llama --activation-checkpointing sometimes
expect_exit 2 "iters" -- plan llama --iters 3   # timing options are run's, not plan's
finish
