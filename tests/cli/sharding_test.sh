# tbd run --sharding: ZeRO-1/2/3 through the CLI (Gloo over loopback): the
# result names the strategy and the model state per rank; what cannot shard
# is refused before any rank starts; a rank lost during the sharded step
# ends the run with the error distributed runs give.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --repeat 1 --iters 2 --warmup 1)

# Two ranks, each strategy: the optimizer state per rank is the shard's.
expect_exit 0 "sharding +optimizer \(ZeRO-1\)" -- run gpt "${tiny[@]}" --nproc 2 --sharding optimizer --out "$WORK/zero1.json"
expect_exit 0 "sharding +gradients \(ZeRO-2\)" -- run gpt "${tiny[@]}" --nproc 2 --sharding gradients --out "$WORK/zero2.json"
expect_exit 0 "sharding +full \(ZeRO-3\)" -- run gpt "${tiny[@]}" --nproc 2 --sharding full --out "$WORK/zero3.json"
expect_exit 0 "distributed" -- run gpt "${tiny[@]}" --nproc 2 --out "$WORK/zero0.json"
json_check "$WORK/zero1.json" 'r["workload"]["options"]["sharding"] == "optimizer" and r["distributed"]["sharding"]["zero_stage"] == 1'
json_check "$WORK/zero2.json" 'r["workload"]["options"]["sharding"] == "gradients" and r["distributed"]["sharding"]["gradient_collective"] == "reduce-scatter"'
json_check "$WORK/zero3.json" 'r["distributed"]["sharding"]["zero_stage"] == 3 and r["distributed"]["sharding"]["units"]["count"] == 2'
# The comm probe timed ZeRO-3's collectives: per unit an all-gather before
# its forward and one before its backward (2 units: 4, and the root's after
# the step), a reduce-scatter per unit and per root bucket.
json_check "$WORK/zero3.json" 'r["comm"]["by_kind"]["all-gather"]["per_iteration"] == 5 and r["comm"]["by_kind"]["reduce-scatter"]["per_iteration"] == 3 and r["comm"]["by_kind"]["all-gather"]["bus_bandwidth_bytes_per_s"] > 0 and r["comm"]["by_kind"]["all-gather"]["bus_bandwidth_is_lower_bound"] and not r["comm"]["by_kind"]["reduce-scatter"]["bus_bandwidth_is_lower_bound"] and not r["comm"]["by_kind"]["all-reduce"]["bus_bandwidth_is_lower_bound"] and 0 <= r["comm"]["exposed_wait_s_mean"] and 0 <= r["comm"]["hidden_share"] <= 1'
json_check "$WORK/zero2.json" 'r["comm"]["by_kind"]["reduce-scatter"]["per_iteration"] >= 1 and r["comm"]["by_kind"]["all-gather"]["per_iteration"] >= 1'
json_check "$WORK/zero0.json" 'r["workload"]["options"]["sharding"] == "none" and r["distributed"]["sharding"]["strategy"] == "none"'
for f in zero1 zero2 zero3; do
  # Measured model state within 5% of ZeRO's formula, per component.
  json_check "$WORK/$f.json" 'all(abs(r["distributed"]["sharding"]["model_state_bytes_per_rank"][k] - r["distributed"]["sharding"]["formula_bytes_per_rank"][k]) <= 0.05 * r["distributed"]["sharding"]["formula_bytes_per_rank"][k] for k in ("weights", "gradients", "optimizer_state"))'
  # The memory probe saw half the replicated run's optimizer state.
  json_check "$WORK/$f.json" 'r["memory"]["breakdown"]["optimizer_state"] > 0'
done
python3 - "$WORK/zero0.json" "$WORK/zero2.json" <<'EOF' || fail "ZeRO-2's optimizer state is not about half the replicated run's"
import json, sys
none, zero2 = (json.load(open(p)) for p in sys.argv[1:])
a, b = none["memory"]["breakdown"]["optimizer_state"], zero2["memory"]["breakdown"]["optimizer_state"]
assert abs(b - a / 2) <= 0.05 * a / 2, (a, b)
EOF
validate_documents "$WORK/zero2.json"

# One rank: every sharded path runs, among one.
expect_exit 0 "sharding +gradients" -- run resnet50 "${tiny[@]}" --batch-size 2 --nproc 1 --sharding gradients --out "$WORK/one.json"
json_check "$WORK/one.json" 'r["distributed"]["world_size"] == 1 and r["distributed"]["sharding"]["ranks"] == 1'
expect_exit 0 "sharding +full" -- run llama "${tiny[@]}" --nproc 1 --sharding full --out "$WORK/one3.json"
json_check "$WORK/one3.json" 'r["distributed"]["sharding"]["units"]["peak_gathered_bytes"] > 0'

# tbd predict --sharding: the throughput and the memory per rank from a
# one-rank base, each strategy's prediction checked by the sharded run it
# predicts; the replayed step issues the collectives the run's comm probe
# counted.
expect_exit 0 "" -- run gpt "${tiny[@]}" --out "$WORK/base.json"
for s in optimizer full; do
  expect_exit 0 "2 ranks, --sharding $s: peak" -- predict "$WORK/base.json" --nproc 2 --sharding "$s" --device-memory 64M \
    --check --dir "$WORK/predict-$s" --out "$WORK/predict-$s.json"
  json_check "$WORK/predict-$s.json" 'abs(r["predictions"][1]["check"]["peak_error"]) <= 0.10 and abs(r["predictions"][1]["check"]["model_state_error"]) <= 0.05 and r["predictions"][1]["fits"] and r["predictions"][1]["fewest_ranks_that_fit"] == 1'
  json_check "$WORK/predict-$s.json" 'r["predictions"][0]["sharding"] == "'$s'" and r["predictions"][0]["global_samples_per_s"] > 0 and r["predictions"][0]["check"]["measured_global_samples_per_s"] > 0 and all(k["per_iteration"] == r["predictions"][0]["check"]["measured_comm"]["by_kind"][name]["per_iteration"] for name, k in r["predictions"][0]["collectives"].items())'
done
validate_documents "$WORK/predict-full.json"
# For devices of their own at a given bus bandwidth (the ring model): a
# slower bus predicts a slower run.
expect_exit 0 "4 ranks, --sharding gradients:" -- predict "$WORK/base.json" --nproc 4 --sharding gradients --bus-gbps 100 \
  --out "$WORK/predict-fast.json"
expect_exit 0 "4 ranks, --sharding gradients:" -- predict "$WORK/base.json" --nproc 4 --sharding gradients --bus-gbps 0.01 \
  --out "$WORK/predict-slow.json"
python3 - "$WORK/predict-fast.json" "$WORK/predict-slow.json" <<'EOF' || fail "a slower bus did not predict a slower sharded run"
import json, sys
fast, slow = (json.load(open(p))["predictions"][0] for p in sys.argv[1:])
assert slow["iteration_ms"]["communication_exposed"] > fast["iteration_ms"]["communication_exposed"] > 0, (fast, slow)
assert slow["global_samples_per_s"] < fast["global_samples_per_s"]
EOF
expect_exit 2 "give --nproc N too" -- predict "$WORK/base.json" --sharding full
expect_exit 2 "--sharding must be none, optimizer" -- predict "$WORK/base.json" --nproc 2 --sharding zero9

# Refused with the reason, before anything starts (exit 2).
expect_exit 2 "this run has none: add --nproc N" -- run gpt "${tiny[@]}" --sharding optimizer
expect_exit 2 "a3c cannot shard its model state" -- run a3c --scale tiny --nproc 1 --sharding gradients
expect_exit 2 "ncf declares no wrapping units" -- run ncf "${tiny[@]}" --nproc 1 --sharding full
expect_exit 2 "use --precision bf16" -- run gpt "${tiny[@]}" --nproc 2 --sharding gradients --precision fp16
expect_exit 2 "--sharding must be none, optimizer" -- run gpt "${tiny[@]}" --nproc 2 --sharding zero9
# dlrm's embedding tables have sparse gradients, which ZeRO does not cut: refused before any rank starts.
expect_exit 2 "sparse gradients" -- run dlrm "${tiny[@]}" --nproc 2 --sharding gradients

# A rank killed mid-run (ZeRO-3: in the all-gathers of every unit before its
# forward and its backward, or a reduce-scatter): every rank ends within the
# timeout, the error names the lost rank, no result file.
"$TBD" run gpt --scale tiny --threads 1 --nproc 2 --sharding full --warmup 1 --repeat 1 --iters 1000000 \
  --quiet --dist-timeout 30 --out "$WORK/killed.json" 2> "$WORK/killed.err" &
expect_killed_rank1_ends $! "$WORK/killed.err" "$WORK/killed.json"

# A frozen rank 0 (SIGSTOP) during ZeRO-3's gathers: rank 1's collective
# times out and names the stopped rank; the run ends within the timeout.
"$TBD" run gpt --scale tiny --threads 1 --nproc 2 --sharding full --warmup 1 --repeat 1 --iters 1000000 \
  --quiet --dist-timeout 5 --out "$WORK/stopped.json" 2> "$WORK/stopped.err" &
expect_stopped_rank0_ends $! "$WORK/stopped.err"
[ ! -e "$WORK/stopped.json" ] || fail "a stopped sharded run left a result file"

finish
