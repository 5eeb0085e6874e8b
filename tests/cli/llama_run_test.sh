# tbd list and tbd run for llama, and the LLM figures of every token
# workload (tokens/s per device, MFU against each peak) in the result and
# the summary line.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 2 --probes time)

# tbd list: the published count of the default size (8b), computed, not allocated.
expect_exit 0 "llama +language modelling +tokens +1 +8,030,261,248" -- list
expect_exit 0 "size +default 8b" -- list llama

# A tiny run: tokens/s per device is the throughput, MFU its model FLOPs over each peak.
expect_exit 0 "MFU +[0-9.e+-]+ tokens/s per device; MFU " -- run llama "${tiny[@]}" --out "$WORK/llama.json"
json_check "$WORK/llama.json" 'r["mfu"]["tokens_per_s_per_device"] == r["throughput"]["samples_per_s"] > 0'
json_check "$WORK/llama.json" 'r["mfu"]["model_flops_per_token"] == r["workload"]["configuration"]["model_flops"]["per_token"]'
json_check "$WORK/llama.json" 'all(isinstance(r["mfu"]["mfu"][k], float) or r["mfu"]["mfu"][k]["not_available"] for k in ("measured", "datasheet"))'
json_check "$WORK/llama.json" 'not isinstance(r["mfu"]["mfu"]["datasheet"], float) or abs(r["mfu"]["mfu"]["datasheet"] * r["mfu"]["peak"]["datasheet"]["flops_per_s"] - r["mfu"]["model_flops_per_s"]) < 1e-6 * r["mfu"]["model_flops_per_s"]'
json_check "$WORK/llama.json" 'r["workload"]["configuration"]["kv_heads"] < r["workload"]["configuration"]["heads"]'
json_check "$WORK/llama.json" 'r["workload"]["configuration"]["learning_rate"]["steps"] >= 3'
# The tied sizes at tiny scale: fewer parameters (no lm_head).
expect_exit 0 "parameters +131,392" -- run llama "${tiny[@]}" --set size=1b
# gpt is a token workload too; ncf is not.
expect_exit 0 "MFU " -- run gpt "${tiny[@]}" --out "$WORK/gpt.json"
json_check "$WORK/gpt.json" 'r["mfu"]["tokens_per_s_per_device"] == r["throughput"]["samples_per_s"]'
"$TBD" run ncf "${tiny[@]}" --quiet --out "$WORK/ncf.json" || fail "ncf run exited $?"
json_check "$WORK/ncf.json" '"mfu" not in r'

# Usage errors: exit 2.
expect_exit 2 "bad value '13b' for setting size of llama" -- run llama "${tiny[@]}" --set size=13b
# Text is not a token file: llama's tokenizer is not byte-level, so it is refused, naming the fix.
expect_exit 2 "llama --data reads token files .* tokenize it first" -- run llama "${tiny[@]}" --data "$WORK/llama.json"

# Llama 3's own shard format (magic 20240801, version 7, uint32 ids): read, and learnt.
python3 -c 'import struct, sys
ids = (list(range(3, 500, 9)) + [511]) * 60
h = [0] * 256; h[0], h[1], h[2] = 20240801, 7, len(ids)
open(sys.argv[1], "wb").write(struct.pack("<256i", *h) + struct.pack("<%dI" % len(ids), *ids))' "$WORK/llama3.bin"
expect_exit 0 "throughput" -- run llama --scale tiny --threads 1 --warmup 1 --repeat 1 --iters 40 --probes time \
  --set lr=3e-3 --set warmup_steps=0 \
  --data "$WORK/llama3.bin" --out "$WORK/llama-data.json"
json_check "$WORK/llama-data.json" '"llm.c shard (version 7, uint32 tokens), 1 file" in r["workload"]["configuration"]["data"]'
json_check "$WORK/llama-data.json" 'r["loss"]["last_measured"] < 0.5 * r["loss"]["first_measured"]'

# 8b on a CPU with less than its 128.5 GB of model state available: refused
# before anything is allocated (the OOM killer would end it without a word).
available_kb="$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)"
if [ "${available_kb:-0}" -gt 0 ] && [ "$available_kb" -lt 120000000 ]; then
  expect_exit 1 "llama 8b needs 128.5 GB for its fp32 weights, gradients and AdamW moments" -- run llama --iters 1
fi

finish
