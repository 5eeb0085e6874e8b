# tbd run: usage errors exit 2 with a clear message, a good run writes a
# complete result, failures write nothing, Ctrl-C gives a partial result.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --batch-size 4 --threads 1)

expect_exit 2 "unknown workload 'nosuch'.*resnet50" -- run nosuch
expect_exit 2 "batch-size: must be at least 1" -- run resnet50 --batch-size 0
expect_exit 2 "iters" -- run resnet50 --repeat 1 --iters -1
expect_exit 2 "iters must be at least 1" -- run resnet50 --repeat 1 --iters 0
expect_exit 2 "bad value '7' for setting depth.*18, 34, 50, 101, 152" -- run resnet50 --set depth=7
expect_exit 2 "unknown setting 'width'" -- run resnet50 --set width=3
expect_exit 2 "key=value" -- run resnet50 --set depth
expect_exit 2 "fp16 needs a CUDA device" -- run resnet50 --precision fp16
expect_exit 2 "no CUDA device is available" -- run resnet50 --device cuda "${tiny[@]}"
expect_exit 2 "scale must be full, small or tiny" -- run resnet50 --scale huge
expect_exit 2 "warmup must be a count or 'auto'" -- run resnet50 --warmup soon
expect_exit 2 "unknown probe 'nosuch'" -- run resnet50 --probes time,nosuch
expect_exit 2 "does not exist" -- run resnet50 "${tiny[@]}" --out "$WORK/missing/r.json"
expect_exit 2 "no such folder" -- run resnet50 "${tiny[@]}" --data "$WORK/nodata"

# A good run: valid JSON with the documented keys and three iterations.
out="$WORK/r.json"
expect_exit 0 "throughput" -- run resnet50 "${tiny[@]}" --repeat 1 --iters 3 --warmup 1 --out "$out"
json_check "$out" 'r["schema"] == "tbd.result/1" and r["workload"]["name"] == "resnet50"'
json_check "$out" 'len(r["iterations"]) == 3 and all(t > 0 for t in r["iterations"])'
json_check "$out" 'r["throughput"]["samples_per_s"] > 0 and r["throughput"]["unit"] == "images/s"'
json_check "$out" 'r["model"]["parameters"] > 0 and r["model"]["trainable_parameters"] > 0'
json_check "$out" 'r["partial"] is False and "options" in r["workload"] and "environment" in r and "summary" in r'
json_check "$out" 'r["workload"]["options"]["batch_size"] == 4 and r["workload"]["options"]["threads"] == 1'

# --json: the document on stdout, the summary on stderr.
"$TBD" run resnet50 "${tiny[@]}" --repeat 1 --iters 2 --warmup 0 --json 2>/dev/null > "$WORK/stdout.json" \
  || fail "--json run failed"
json_check "$WORK/stdout.json" 'len(r["iterations"]) == 2'

# A corrupt dataset: exit 1 naming the file, and no result file.
mkdir -p "$WORK/data/cat"
echo "not a jpeg" > "$WORK/data/cat/bad.jpg"
expect_exit 1 "bad.jpg: not a JPEG" -- run resnet50 "${tiny[@]}" --data "$WORK/data" --out "$WORK/bad.json"
[ ! -e "$WORK/bad.json" ] || fail "a failed run left a result file"
ls "$WORK" | grep -q "\.tmp\." && fail "a temporary file was left behind"

# A diverging run: exit 1, no result file.
expect_exit 1 "diverged" -- run resnet50 "${tiny[@]}" --warmup 0 --repeat 1 --iters 30 --set lr=1e11 --out "$WORK/nan.json"
[ ! -e "$WORK/nan.json" ] || fail "a diverged run left a result file"

# Ctrl-C during the measured window: exit 130 and a valid partial result.
"$TBD" run resnet50 "${tiny[@]}" --warmup 1 --repeat 1 --iters 1000000 --quiet --out "$WORK/partial.json" &
pid=$!
for _ in $(seq 1 100); do  # wait until it measures (the CPU probe's first window exists by then)
  sleep 0.2
  kill -0 "$pid" 2>/dev/null || break
  [ "$(ps -o etimes= -p "$pid" | tr -d ' ')" -ge 3 ] && break
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || fail "interrupted run exited $rc, expected 130 (128 + SIGINT)"
json_check "$WORK/partial.json" 'r["partial"] is True and len(r["iterations"]) > 0'

# Numbers CLI11 would saturate or wrap are refused as typed (exit 2), and a
# thread count that would exhaust libgomp is refused before it starts.
expect_exit 2 "--batch-size: must be at most 1073741824, got '99999999999999999999'" -- run resnet50 --batch-size 99999999999999999999
expect_exit 2 "--seed: must be a whole number in \[0, 18446744073709551615\], got '-1'" -- run resnet50 --seed -1
expect_exit 2 "--seed: must be at most 18446744073709551615, got '18446744073709551616'" -- run resnet50 --seed 18446744073709551616
expect_exit 2 "^tbd: error: --threads 3000 is more than this machine can use" -- run resnet50 --scale tiny --threads 3000

# --cuda-graphs (docs/gpu.md#cuda-graphs): a value it does not know, and on
# where no graph can run (the CPU), are refused before anything runs and
# leave no result; auto runs eagerly and records why.
expect_exit 2 "--cuda-graphs must be off, on or auto, got 'yes'" -- run ncf --cuda-graphs yes
expect_exit 2 "^tbd: error: --cuda-graphs on: a CUDA graph replays GPU work and this run is on the cpu" -- \
  run ncf "${tiny[@]}" --cuda-graphs on --out "$WORK/graphs.json"
expect_exit 2 "^tbd: error: --cuda-graphs on: a CUDA graph replays GPU work and this run is on the cpu" -- \
  run ncf "${tiny[@]}" --cuda-graphs on --nproc 2 --out "$WORK/graphs.json"
[ ! -e "$WORK/graphs.json" ] || fail "a refused --cuda-graphs run left a result file"
expect_exit 0 "cuda graphs.*not used .a CUDA graph replays GPU work" -- \
  run ncf "${tiny[@]}" --repeat 1 --iters 1 --warmup 0 --cuda-graphs auto --out "$WORK/graphs.json"
json_check "$WORK/graphs.json" 'r["framework"]["cuda_graphs"]["used"] is False and r["workload"]["options"]["cuda_graphs"] == "auto"'

finish
