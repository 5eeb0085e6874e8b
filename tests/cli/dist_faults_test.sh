# Distributed runs against frozen, silent, unresolvable or killed peers and
# launchers: every case ends with a one-line `tbd: error:` within
# --dist-timeout + 10 s, and no rank outlives its launcher by more than 2 s.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --batch-size 4 --threads 1 --probes time --warmup 0 --repeat 1)
long=("${tiny[@]}" --iters 1000000 --quiet)

# 1. A frozen rank 0 (SIGSTOP): rank 1's collective times out and its error
# path must not block on rank 0's store. Measured: 8 s with --dist-timeout 5.
"$TBD" run resnet50 "${long[@]}" --nproc 2 --dist-timeout 5 2> "$WORK/stop.err" &
expect_stopped_rank0_ends $! "$WORK/stop.err"
grep -q "frame #" "$WORK/stop.err" && fail "a C++ backtrace was printed: $(head -5 "$WORK/stop.err")"

# 1. A MASTER_PORT that accepts connections but never answers (not a store).
python3 - "$WORK/silent.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(0.5); held = []; end = time.time() + 40
while time.time() < end:
    try: held.append(s.accept()[0])
    except socket.timeout: pass
PY
silent=$!
for _ in $(seq 1 50); do [ -s "$WORK/silent.port" ] && break; sleep 0.1; done
start=$(date +%s)
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$WORK/silent.port") \
  timeout 30 "$TBD" run resnet50 "${tiny[@]}" --dist-timeout 3 > "$WORK/silent.out" 2>&1
rc=$?
kill "$silent" 2>/dev/null
[ "$rc" -eq 1 ] || fail "a silent MASTER_PORT made the run exit $rc (124: hung), expected 1"
[ $(( $(date +%s) - start )) -le 13 ] || fail "a silent MASTER_PORT took more than --dist-timeout + 10 s"
grep -q "^tbd: error: rank 1 could not join the rendezvous at 127.0.0.1:.*did not finish within" "$WORK/silent.out" ||
  fail "no clear error for a silent MASTER_PORT: $(cat "$WORK/silent.out")"

# 12. Nobody listening: one error line, none of c10d's backtraces.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 30 "$TBD" run resnet50 "${tiny[@]}" \
  --dist-timeout 2 > "$WORK/refused.out" 2>&1
[ "$(wc -l < "$WORK/refused.out")" -eq 1 ] || fail "expected one error line, got: $(head -c 600 "$WORK/refused.out")"
grep -q "^tbd: error: rank 1 could not join the rendezvous" "$WORK/refused.out" || fail "$(cat "$WORK/refused.out")"

# 12. An unresolvable MASTER_ADDR fails at once, naming the variable.
start=$(date +%s)
RANK=1 WORLD_SIZE=2 MASTER_ADDR=no-such-host.invalid MASTER_PORT=29500 \
  expect_exit 1 "MASTER_ADDR 'no-such-host.invalid' does not resolve" -- run resnet50 "${tiny[@]}" --dist-timeout 15
[ $(( $(date +%s) - start )) -le 15 ] || fail "an unresolvable MASTER_ADDR took longer than --dist-timeout"

# 12. --nproc under a launcher's RANK/WORLD_SIZE is refused, not ignored.
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
  expect_exit 2 "--nproc 2 starts ranks itself, but this process already is rank 0 of 2" -- run resnet50 "${tiny[@]}" --nproc 2
SLURM_PROCID=1 SLURM_NTASKS=2 expect_exit 2 "SLURM_PROCID/SLURM_NTASKS are set" -- run resnet50 "${tiny[@]}" --nproc 2

# 3. More ranks than CPUs: refused with the reason and the override.
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc honours OMP_NUM_THREADS; tbd counts its affinity mask
expect_exit 2 "--nproc $((cpus + 1)): $((cpus + 1)) ranks on $cpus CPUs? would only share them.*--oversubscribe" -- \
  run resnet50 "${tiny[@]}" --nproc $((cpus + 1))
expect_exit 2 "--oversubscribe" -- scale resnet50 "${tiny[@]}" --nproc 1,1000
# Beyond what the local launcher starts, even oversubscribed: refused
# before any rank starts, naming torchrun/Slurm and the plans that start none.
expect_exit 2 "the local launcher starts 1 to 1024 ranks.*asked for 2000.*torchrun or Slurm" -- \
  run resnet50 "${tiny[@]}" --nproc 2000 --oversubscribe

# 2. A launcher killed with SIGKILL takes its ranks with it (within 2 s).
"$TBD" run resnet50 "${long[@]}" --nproc 2 --dist-timeout 30 2> /dev/null &
launcher=$!
rank1=$(rank_pid "$launcher" 1)
ranks=$(pgrep -P "$launcher" | tr '\n' ' ')
[ -n "$rank1" ] || fail "rank 1 never started"
kill -9 "$launcher"
wait "$launcher" 2>/dev/null
sleep 2
for r in $ranks; do
  running "$r" && { fail "rank pid $r outlived its SIGKILLed launcher by 2 s"; kill -9 "$r"; }
done

# 4. SIGTERM to the launcher: forwarded, the ranks agree to stop, rank 0
# writes a partial result, exit 143, and no rank is blamed.
"$TBD" run resnet50 "${long[@]}" --nproc 2 --dist-timeout 30 --out "$WORK/term.json" 2> "$WORK/term.err" &
launcher=$!
rank1=$(rank_pid "$launcher" 1)
kill -TERM "$launcher"
timeout 30 tail --pid="$launcher" -f /dev/null
wait "$launcher"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM to the launcher exited $rc, expected 143: $(cat "$WORK/term.err")"
grep -q "interrupted by SIGTERM" "$WORK/term.err" || fail "launcher did not say it was interrupted: $(cat "$WORK/term.err")"
grep -q "killed by signal" "$WORK/term.err" && fail "a rank was blamed for the launcher's SIGTERM: $(cat "$WORK/term.err")"
[ -f "$WORK/term.json" ] && json_check "$WORK/term.json" 'r["partial"] is True and r["distributed"]["world_size"] == 2' ||
  fail "no partial result after SIGTERM"

finish
