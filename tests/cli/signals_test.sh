# SIGTERM behaves like Ctrl-C: the run stops after the current iteration,
# writes a partial result and exits 143 (SIGINT: 130). A second signal is
# absorbed; the third abandons the run, leaving no result and no temporary.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --batch-size 4 --threads 1 --probes time --warmup 0 --repeat 1 --iters 1000000 --quiet)
# Seconds per iteration (2 at batch 16 on one core): the signals land inside one.
slow=(--scale small --batch-size 16 --threads 1 --probes time --warmup 0 --repeat 1 --iters 1000000 --quiet)
slower=(--scale small --batch-size 64 --threads 1 --probes time --warmup 0 --repeat 1 --iters 1000000 --quiet)

# started_timing PID: waits (at most 20 s) until the run has been up for 3 s.
started_timing() {
  for _ in $(seq 1 100); do
    sleep 0.2
    [ "$(ps -o etimes= -p "$1" 2>/dev/null | tr -d ' ')" -ge 3 ] 2>/dev/null && return 0
  done
  return 1
}

# stop_with PID SIGNAL...: sends each signal 0.3 s apart, then waits (at most 60 s).
stop_with() {
  local pid=$1
  shift
  for sig in "$@"; do kill "-$sig" "$pid"; sleep 0.2; done
  timeout 60 tail --pid="$pid" -f /dev/null
}

"$TBD" run resnet50 "${tiny[@]}" --out "$WORK/term.json" 2> "$WORK/term.err" &
pid=$!
started_timing $pid || fail "the run did not start"
stop_with $pid TERM
wait $pid
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, expected 143: $(cat "$WORK/term.err")"
json_check "$WORK/term.json" 'r["partial"] is True and len(r["iterations"]) > 0'

# Ctrl-C twice (a double press): still a partial result, exit 130.
"$TBD" run resnet50 "${slow[@]}" --out "$WORK/twice.json" 2> "$WORK/twice.err" &
pid=$!
started_timing $pid || fail "the run did not start"
stop_with $pid INT INT
wait $pid
rc=$?
[ "$rc" -eq 130 ] || fail "two SIGINTs: exit $rc, expected 130: $(cat "$WORK/twice.err")"
[ -f "$WORK/twice.json" ] && json_check "$WORK/twice.json" 'r["partial"] is True' || fail "two SIGINTs lost the result"

# Three times: abandoned at once by the signal itself, not after the
# iteration (about 8 s here); nothing half-written, no temporary. (Should the
# iteration end between the signals, the result is written whole first.)
"$TBD" run resnet50 "${slower[@]}" --out "$WORK/thrice.json" 2> "$WORK/thrice.err" &
pid=$!
started_timing $pid || fail "the run did not start"
start=$(date +%s)
stop_with $pid INT INT INT
wait $pid
rc=$?
[ "$rc" -eq 130 ] || fail "three SIGINTs: exit $rc, expected 130 (killed by SIGINT)"
[ $(( $(date +%s) - start )) -le 4 ] || fail "three SIGINTs did not end the run at once"
[ ! -e "$WORK/thrice.json" ] || json_check "$WORK/thrice.json" 'r["partial"] is True'
[ -z "$(ls "$WORK" | grep '\.tmp')" ] || fail "temporaries left: $(ls "$WORK")"

finish
