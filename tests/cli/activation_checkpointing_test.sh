# --activation-checkpointing: recorded in the result and named in the
# summary; the flops probe reports hardware FLOPs above model FLOPs (HFU
# above MFU); bad values and workloads without transformer blocks exit 2.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 2)

expect_exit 0 "activation checkpointing full: every transformer block re-runs its forward in backward" -- \
  run gpt "${tiny[@]}" --activation-checkpointing full --probes flops,memory --out "$WORK/full.json"
expect_exit 0 "recomputed .* per iteration re-run in backward" -- \
  run gpt "${tiny[@]}" --activation-checkpointing full --probes flops
json_check "$WORK/full.json" 'r["workload"]["options"]["activation_checkpointing"] == "full"'
json_check "$WORK/full.json" 'r["flops"]["recomputation"] > 0 and r["flops"]["hardware_per_iteration"] == r["flops"]["per_iteration"] + r["flops"]["recomputation"]'
json_check "$WORK/full.json" 'r["flops"]["hardware_achieved_flops_per_s"] > r["flops"]["achieved_flops_per_s"] > 0'
json_check "$WORK/full.json" 'r["memory"]["breakdown"]["feature_maps"] > 0'

# Without it the two counts are one; the option is still recorded.
expect_exit 0 "throughput" -- run gpt "${tiny[@]}" --probes flops --out "$WORK/none.json"
json_check "$WORK/none.json" 'r["workload"]["options"]["activation_checkpointing"] == "none"'
json_check "$WORK/none.json" 'r["flops"]["recomputation"] == 0 and r["flops"]["hardware_per_iteration"] == r["flops"]["per_iteration"]'
json_check "$WORK/none.json" 'r["flops"]["per_iteration"] == '"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["flops"]["per_iteration"])' "$WORK/full.json")"
out="$("$TBD" run gpt "${tiny[@]}" --probes flops 2>&1)"
echo "$out" | grep -q "checkpoint" && fail "a run without checkpointing mentions it: $out"

# selective alone is K 2; the transformer checkpoints its encoder and decoder layers.
expect_exit 0 "activation checkpointing selective=2: one transformer block in 2" -- \
  run transformer "${tiny[@]}" --activation-checkpointing selective --probes flops --out "$WORK/t.json"
json_check "$WORK/t.json" 'r["workload"]["options"]["activation_checkpointing"] == "selective=2" and r["flops"]["recomputation"] > 0'

# llama checkpoints its decoder blocks the same way.
expect_exit 0 "activation checkpointing full" -- \
  run llama "${tiny[@]}" --activation-checkpointing full --probes flops --out "$WORK/l.json"
json_check "$WORK/l.json" 'r["workload"]["options"]["activation_checkpointing"] == "full" and r["flops"]["recomputation"] > 0'

# Usage errors: exit 2.
expect_exit 2 "--activation-checkpointing must be none, full, selective or selective=K .*got 'selective=0'" -- \
  run gpt "${tiny[@]}" --activation-checkpointing selective=0
expect_exit 2 "--activation-checkpointing must be none, full, selective or selective=K .*got 'all'" -- \
  run gpt "${tiny[@]}" --activation-checkpointing all
expect_exit 2 "resnet50 has no transformer blocks to re-run; it applies to transformer, gpt" -- \
  run resnet50 "${tiny[@]}" --activation-checkpointing full

finish
