# tbd list and tbd run for a3c: a tiny run records the environment time;
# data-parallel launches, unknown games and reduced precision are refused (exit 2).
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1)

# (`tbd list a3c` alone: the full table builds every workload's model.)
out="$("$TBD" list a3c 2>&1)" || fail "tbd list a3c failed: $out"
for pattern in "deep reinforcement learning" "unit +frames" "batch +8 worker threads \(default\)" "parameters +677,943 \(full scale\)" "game +default pong"; do
  echo "$out" | grep -Eq "$pattern" || fail "tbd list a3c lacks /$pattern/: $out"
done

# The default probes (time, data, cpu, flops, memory) on a tiny run.
out="$WORK/a3c.json"
expect_exit 0 "env .*% of worker time" -- run a3c --scale tiny --repeat 1 --iters 3 --out "$out"
json_check "$out" "r['workload']['name'] == 'a3c' and len(r['iterations']) == 3 and r['partial'] is False"
json_check "$out" 'r["throughput"]["unit"] == "frames/s" and r["throughput"]["samples_per_s"] > 0'
json_check "$out" 'r["throughput"]["samples"] == 3 * 8 * 5 * 4'
json_check "$out" 'r["workload_metrics"]["env"]["seconds"] > 0 and r["workload_metrics"]["env"]["frames"] == 3 * 8 * 5 * 4'
json_check "$out" '0 < r["workload_metrics"]["env"]["share_of_worker_time"] < 1'
json_check "$out" 'r["flops"]["per_iteration"] > 0 and r["memory"]["peak_bytes"] > 0'

# Breakout and every probe this build has; t_max as a setting.
expect_exit 0 "throughput" -- run a3c "${tiny[@]}" --repeat 1 --iters 2 --batch-size 2 --set game=breakout --set t_max=3 --probes all --out "$WORK/all.json"
json_check "$WORK/all.json" 'r["workload"]["configuration"]["game"] == "breakout" and r["throughput"]["samples"] == 2 * 2 * 3 * 4'

# Refusals, before anything runs.
expect_exit 2 "a3c does not run data-parallel .*asynchronously" -- run a3c "${tiny[@]}" --nproc 2
out="$(WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$TBD" run a3c "${tiny[@]}" 2>&1)"
rc=$?
[ "$rc" -eq 2 ] || fail "a3c under WORLD_SIZE=2 exited $rc, expected 2: $out"
echo "$out" | grep -q "does not run data-parallel" || fail "a3c under WORLD_SIZE=2 lacks the explanation: $out"
expect_exit 2 "does not run data-parallel" -- scale a3c --nproc 1,2
expect_exit 2 "bad value 'doom' for setting game of a3c|doom" -- run a3c "${tiny[@]}" --set game=doom
expect_exit 2 "fp32 only" -- run a3c "${tiny[@]}" --precision bf16
expect_exit 2 "reads no dataset" -- run a3c "${tiny[@]}" --data "$WORK"

finish
