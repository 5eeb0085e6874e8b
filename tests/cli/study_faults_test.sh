# Suites and sweeps against kills, signals and each other: child runs die
# with their study, a results folder takes one study at a time, a run someone
# killed is recorded as killed (not out of memory), and Ctrl-C or SIGTERM
# keeps what was measured.
source "$(dirname "$0")/lib.sh"
long=(--scale tiny --threads 1 --probes time --warmup 0 --repeat 1 --iters 1000000)  # a sweep sets --batch-size

# child_of PID: the pid of its child `tbd run` once it has run for 2 s.
child_of() {
  local child=""
  for _ in $(seq 1 100); do
    sleep 0.2
    child=$(pgrep -P "$1" | head -1)
    [ -n "$child" ] && [ "$(ps -o etimes= -p "$child" | tr -d ' ')" -ge 2 ] && break
  done
  echo "$child"
}

# 2. SIGKILL of a suite or a sweep: its child run dies within 2 s.
for study in "suite --workloads resnet50 --batch-size 4 --out $WORK/killed-suite" "sweep resnet50 --batch-sizes 4 --out $WORK/killed-sweep"; do
  # shellcheck disable=SC2086
  "$TBD" $study "${long[@]}" > /dev/null 2>&1 &
  parent=$!
  child=$(child_of $parent)
  [ -n "$child" ] || fail "tbd $study started no child run"
  kill -9 $parent
  wait $parent 2>/dev/null
  sleep 2
  if [ -n "$child" ] && running "$child"; then
    fail "the child run of a SIGKILLed tbd $study outlived it by 2 s"
    kill -9 "$child"
  fi
done

# 5. Two studies into one folder: the second is refused, naming the first.
"$TBD" suite --workloads resnet50 --out "$WORK/shared" --batch-size 4 "${long[@]}" > /dev/null 2>&1 &
first=$!
child_of $first > /dev/null
expect_exit 2 "$WORK/shared is in use by \`.*tbd suite --workloads resnet50 --out $WORK/shared.*\` \(pid $first\)" -- \
  sweep resnet50 --batch-sizes 2 --out "$WORK/shared" "${long[@]}"
# 4. SIGTERM to the suite: forwarded to its run, which keeps a partial result; exit 143.
kill -TERM $first
timeout 30 tail --pid=$first -f /dev/null
wait $first
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM to a suite: exit $rc, expected 143"
json_check "$WORK/shared/index.json" 'r["runs"][0]["status"] == "partial" and "SIGTERM" in r["runs"][0]["error"]'
json_check "$WORK/shared/resnet50.json" 'r["partial"] is True'

# 2 and 5. A run left behind by a study that is gone still holds the folder's
# lock: a new study says so instead of measuring beside it.
mkdir -p "$WORK/orphaned"
python3 - "$WORK/orphaned/.tbd.lock" <<'PY' &
import fcntl, sys, time
f = open(sys.argv[1], "w")
f.write("999999999 tbd suite --out orphaned\n"); f.flush()
fcntl.flock(f, fcntl.LOCK_EX)
time.sleep(30)
PY
holder=$!
for _ in $(seq 1 50); do [ -s "$WORK/orphaned/.tbd.lock" ] && break; sleep 0.1; done
sleep 0.3
expect_exit 2 "in use by a run that \`tbd suite --out orphaned\` \(pid 999999999\) started: that study is gone" -- \
  suite --workloads resnet50 --out "$WORK/orphaned" "${long[@]}"
kill $holder

# 12. A sweep's run killed by hand is recorded as killed, not as out of memory.
"$TBD" sweep resnet50 --batch-sizes 2 --out "$WORK/handkill" "${long[@]}" > "$WORK/handkill.out" 2>&1 &
sweep=$!
child=$(child_of $sweep)
[ -n "$child" ] && kill -9 "$child" || fail "the sweep started no run: $(cat "$WORK/handkill.out")"
timeout 30 tail --pid=$sweep -f /dev/null
json_check "$WORK/handkill/sweep.json" 'r["points"][0]["status"] == "killed" and "not the out-of-memory killer" in r["points"][0]["error"]'

# 10. --out naming a file.
echo '{}' > "$WORK/existing.json"
expect_exit 2 "--out $WORK/existing.json is a file, but tbd sweep writes a results folder" -- \
  sweep resnet50 --batch-sizes 2 --out "$WORK/existing.json" --scale tiny
expect_exit 2 "--out $WORK/existing.json is a file, but tbd suite writes a results folder" -- \
  suite --workloads resnet50 --out "$WORK/existing.json" --scale tiny

# 10. Batch size 1 on a batch-norm model: a clear error, and the first point
# of an automatic sweep records it and goes on.
expect_exit 1 "batch size 1 is too small for resnet50: its batch normalisation needs more than one value per channel.*--batch-size 2 or more" -- \
  run resnet50 --scale tiny --threads 1 --batch-size 1 --warmup 0 --repeat 1 --iters 1 --probes time
expect_exit 0 "largest batch size that fits: 2" -- sweep resnet50 --batch-sizes auto --max-batch 2 --out "$WORK/auto" \
  --scale tiny --threads 1 --warmup 0 --repeat 1 --iters 1 --probes time
json_check "$WORK/auto/sweep.json" '[p["status"] for p in r["points"]] == ["failed", "ok"] and "too small" in r["points"][0]["error"]'

finish
