# tbd run --nproc / tbd scale: local data-parallel runs on c10d (Gloo over
# loopback), merged results, and failures that end every rank quickly.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --batch-size 4 --threads 1)

# Two local ranks: exit 0 and one merged result.
expect_exit 0 "distributed +2 ranks \(gloo\)" -- run resnet50 "${tiny[@]}" --nproc 2 --repeat 1 --iters 3 --warmup 1 --out "$WORK/dp.json"
json_check "$WORK/dp.json" 'r["distributed"]["world_size"] == 2 and len(r["distributed"]["per_rank"]) == 2'
json_check "$WORK/dp.json" 'r["distributed"]["global_batch_size"] == 8 and r["distributed"]["global_samples_per_s"] > 0'
json_check "$WORK/dp.json" 'len(r["iterations"]) == 3 and r["comm"]["iterations"] == 3 and r["comm"]["bytes_per_iteration"] > 0'
json_check "$WORK/dp.json" '0 <= r["comm"]["hidden_share"] <= 1'
# The headline is the global throughput; rank 0's own figure is labelled as such.
out="$("$TBD" run resnet50 "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --warmup 0 --probes time 2>&1)"
first="$(echo "$out" | grep -E '^  (throughput|rank 0) ' | head -1)"
echo "$first" | grep -Eq "^  throughput +[0-9.e+]+ images/s across 2 ranks" || fail "the first throughput line is not global: $out"
echo "$out" | grep -Eq "^  rank 0 +[0-9.e+]+ images/s" || fail "rank 0's throughput is not labelled: $out"
expect_exit 0 "distributed" -- run resnet50 "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --warmup 0 --dist-overlap off --min-time 0.2
# The bucket size is a run-wide --set key: a tiny bucket splits resnet50's gradients into many.
expect_exit 0 "distributed" -- run resnet50 "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --warmup 0 --set bucket_mb=0.01 --out "$WORK/buckets.json"
json_check "$WORK/buckets.json" 'r["distributed"]["bucket_mb"] == 0.01 and r["distributed"]["gradient_buckets"] > r["distributed"]["world_size"]'
json_check "$WORK/dp.json" 'r["distributed"]["gradient_buckets"] == 1'
expect_exit 2 "bucket_mb=lots: give a number of megabytes" -- run resnet50 --nproc 2 --set bucket_mb=lots
# Sparse embedding-bag gradients (dlrm) are all-reduced too.
expect_exit 0 "distributed +2 ranks" -- run dlrm --scale tiny --threads 1 --nproc 2 --repeat 1 --iters 2 --warmup 1 --probes time

# Bad combinations of the launcher's variables are usage errors.
RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 expect_exit 2 "rank 2 is not below the world size 2" -- run resnet50 "${tiny[@]}"
WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 expect_exit 2 "RANK is not" -- run resnet50 "${tiny[@]}"
expect_exit 2 "dist-overlap must be on or off" -- run resnet50 --nproc 2 --dist-overlap maybe

# Nobody at MASTER_ADDR:MASTER_PORT: a clear error within the timeout.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s)
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  expect_exit 1 "could not join the rendezvous at 127.0.0.1:$port" -- run resnet50 "${tiny[@]}" --dist-timeout 3
[ $(( $(date +%s) - start )) -lt 60 ] || fail "the unreachable rendezvous took more than 60 s to fail"

# A rank killed mid-run: every rank ends, the error names the lost rank, no result file.
"$TBD" run resnet50 "${tiny[@]}" --nproc 2 --warmup 1 --repeat 1 --iters 1000000 --quiet --dist-timeout 30 \
  --out "$WORK/killed.json" 2> "$WORK/killed.err" &
launcher=$!
expect_killed_rank1_ends "$launcher" "$WORK/killed.err" "$WORK/killed.json"
grep -q "rank 1 of 2 was killed by signal 9" "$WORK/killed.err" || fail "launcher did not name rank 1: $(cat "$WORK/killed.err")"
[ -z "$(pgrep -P "$launcher")" ] || fail "orphan workers left running"

# tbd scale: one run per process count, efficiency against the first.
expect_exit 0 "efficiency" -- scale resnet50 --nproc 1,2 "${tiny[@]}" --repeat 1 --iters 2 --warmup 1 --out "$WORK/scale.json"
json_check "$WORK/scale.json" '[p["nproc"] for p in r["points"]] == [1, 2] and abs(r["points"][0]["efficiency"] - 1) < 1e-9'
json_check "$WORK/scale.json" 'all(p["samples_per_s"] > 0 and p["efficiency"] > 0 for p in r["points"])'
expect_exit 2 "comma-separated list" -- scale resnet50 --nproc 1,x

finish
