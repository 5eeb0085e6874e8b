# A full disk: a --trace that cannot be written costs the trace, not the
# measured result (which is written, marked with the trace's error, exit 1);
# a result that cannot be written names ENOSPC; no temporary is left behind.
# Needs a tiny tmpfs: mounted directly as root, else in a user namespace.
source "$(dirname "$0")/lib.sh"
run=(--scale tiny --batch-size 4 --threads 1 --probes time --warmup 0 --repeat 1 --iters 1 --quiet)
mkdir -p "$WORK/full"

# in_full_fs COMMAND...: runs it with $WORK/full a 64 KiB tmpfs; 77 when no tmpfs can be mounted.
in_full_fs() {
  local script='mount -t tmpfs -o size=64k tmpfs "$0" || exit 77; "${@}"; rc=$?; ls -A "$0" > "$0.listing"; umount "$0"; exit $rc'
  if [ "$(id -u)" -eq 0 ]; then
    unshare -m bash -c "$script" "$WORK/full" "$@"
  else
    unshare -rm bash -c "$script" "$WORK/full" "$@"
  fi
}
in_full_fs true 2> /dev/null
if [ $? -eq 77 ] || ! command -v unshare > /dev/null; then
  echo "skipped: cannot mount a tmpfs here (not root, no user namespaces)"
  exit 77
fi

# The trace does not fit; the result does, elsewhere.
in_full_fs "$TBD" run resnet50 "${run[@]}" --trace "$WORK/full/trace.json" --out "$WORK/result.json" > "$WORK/trace.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "a trace on a full disk exited $rc, expected 1: $(cat "$WORK/trace.out")"
grep -q "tbd: error: cannot write the trace $WORK/full/trace.json: .*No space left on device.*the run's result was kept in $WORK/result.json" \
  "$WORK/trace.out" || fail "the error does not name ENOSPC and the kept result: $(grep tbd: "$WORK/trace.out")"
json_check "$WORK/result.json" 'r["trace"]["file"] is None and "No space left on device" in r["trace"]["error"] and len(r["iterations"]) == 1'
[ ! -s "$WORK/full.listing" ] || fail "left on the full disk: $(cat "$WORK/full.listing")"

# The result itself does not fit: ENOSPC named, nothing left behind.
in_full_fs bash -c 'head -c 100000 /dev/zero > "$1/filler" 2> /dev/null; "${@:2}"' _ "$WORK/full" \
  "$TBD" run resnet50 "${run[@]}" --out "$WORK/full/result.json" > "$WORK/out.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "a result on a full disk exited $rc, expected 1: $(cat "$WORK/out.out")"
grep -q "tbd: error: cannot write $WORK/full/result.json: No space left on device" "$WORK/out.out" ||
  fail "the error does not name ENOSPC: $(cat "$WORK/out.out")"
[ "$(cat "$WORK/full.listing")" = "filler" ] || fail "left on the full disk: $(cat "$WORK/full.listing")"

# A CSV or MLLOG append that does not fit leaves no 0-byte file behind (the
# disk filled first, so the new file's first write fails).
for log in csv mllog; do
  in_full_fs bash -c 'head -c 1M /dev/zero > "$0/fill" 2> /dev/null; "$@"' "$WORK/full" \
    "$TBD" run ncf "${run[@]}" --"$log" "$WORK/full/runs.$log" --out "$WORK/$log.json" > "$WORK/$log.out" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] || fail "--$log on a full disk exited $rc, expected 1: $(cat "$WORK/$log.out")"
  grep -q "No space left on device" "$WORK/$log.out" || fail "--$log: ENOSPC not named: $(cat "$WORK/$log.out")"
  grep -q "runs.$log" "$WORK/full.listing" && fail "--$log on a full disk left $(cat "$WORK/full.listing")"
done

finish
