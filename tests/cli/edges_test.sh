# The edges of issue 29: folders a study cannot create, empty or degenerate
# values on the command line, two outputs naming one file, and signals at
# the start of a run or to a scale study. Each is a clear refusal (exit 2,
# naming the option and the fix) or an honoured signal (exit 130/143), never
# "internal error".
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --iters 1 --warmup 0 --repeat 1 --threads 1 --quiet)

# expect_usage PATTERN -- ARGS...: exit 2, output matching PATTERN, no "internal error".
expect_usage() {
  local pattern="$1"
  shift 2
  expect_exit 2 "$pattern" -- "$@"
  "$TBD" "$@" 2>&1 | grep -q "internal error" && fail "tbd $* reached an internal error"
}

"$TBD" run resnet50 "${tiny[@]}" --out "$WORK/base.json" || fail "the base run failed"

# --- study folders that cannot be created: the path and the fix ---
expect_usage '--out /proc/x: cannot create.*folder you can write' -- sweep resnet50 --batch-sizes 2 --scale tiny --out /proc/x
expect_usage '--out /proc/x: cannot create.*folder you can write' -- suite --workloads ncf --scale tiny --out /proc/x
expect_usage '--dir /proc/x: cannot create.*folder you can write' -- predict "$WORK/base.json" --nproc 2 --check --dir /proc/x

# --- lists: empty, empty items, duplicates ---
for probes in '' ',' 'time,,data' 'time,'; do
  expect_usage "--probes.*(at least one item|empty item)" -- run resnet50 "${tiny[@]}" --probes "$probes"
done
expect_usage "--probes 'time,time' names time twice" -- run resnet50 "${tiny[@]}" --probes time,time
for workloads in '' ',' 'ncf,,dlrm'; do
  expect_usage "--workloads.*(at least one item|empty item)" -- suite --workloads "$workloads" --out "$WORK/s"
done
[ ! -e "$WORK/s" ] || fail "a refused suite created its folder"
expect_usage "--nproc '2,1,2' names 2 twice" -- scale ncf --nproc 2,1,2 --scale tiny
expect_usage "--batch-sizes '2,2' names 2 twice" -- sweep ncf --batch-sizes 2,2 --scale tiny --out "$WORK/sw"

# --- single values ---
expect_usage "--out needs a file name" -- run resnet50 "${tiny[@]}" --out ''
for command in "sweep ncf" "suite" "scale ncf"; do
  # shellcheck disable=SC2086
  expect_usage "--out: needs a name" -- $command --out ''
done
expect_usage "--memory-limit takes a size" -- sweep ncf --scale tiny --memory-limit '' --out "$WORK/sw"
expect_usage "--max-batch must be a batch size in" -- sweep ncf --scale tiny --max-batch 99999999999999999999 --out "$WORK/sw"
for bus in 0 nan -1 inf; do
  expect_usage "--bus-gbps" -- predict "$WORK/base.json" --nproc 2 --bus-gbps "$bus"
done
# --threads 0 is LibTorch's choice, and the result records the number it used.
"$TBD" run ncf --scale tiny --iters 1 --warmup 0 --repeat 1 --quiet --threads 0 --out "$WORK/threads.json" ||
  fail "--threads 0 failed"
json_check "$WORK/threads.json" 'r["workload"]["options"]["threads"] >= 1'

# --- two outputs of one run naming one file: refused before the run ---
for other in --trace --csv --mllog; do
  expect_usage "$other and --out both name|--out and $other both name" -- \
    run ncf "${tiny[@]}" --out "$WORK/same.json" "$other" "$WORK/same.json"
done
expect_usage "--mllog and --csv both name" -- run ncf "${tiny[@]}" --mllog "$WORK/log" --csv "$WORK/./log"
[ ! -e "$WORK/same.json" ] && [ ! -e "$WORK/log" ] || fail "a refused run wrote a file"
# A study passes its --mllog and --csv to every run: refused before the first one.
expect_usage "--mllog and --csv both name" -- sweep ncf --batch-sizes 2 --scale tiny --out "$WORK/sw2" \
  --mllog "$WORK/log" --csv "$WORK/log"
expect_usage "--mllog and --csv both name" -- suite --workloads ncf --scale tiny --out "$WORK/su2" \
  --mllog "$WORK/log" --csv "$WORK/../$(basename "$WORK")/log"
[ ! -e "$WORK/sw2" ] && [ ! -e "$WORK/su2" ] && [ ! -e "$WORK/log" ] || fail "a refused study wrote a folder or log"

# --- a text corpus larger than the memory a run may use ---
# gpt's --data text is mapped, not copied: 256 MiB of text under a 600 MB
# limit on private memory (RLIMIT_DATA; file mappings read-only do not count)
# trains. Read into tokens (four bytes per byte) it needed over 1 GiB and
# ended with "out of host memory", blaming the batch size.
head -c 268435456 /dev/zero | tr '\0' 'a' >"$WORK/big.txt"
(
  ulimit -d 600000
  "$TBD" run gpt "${tiny[@]}" --data "$WORK/big.txt" --out "$WORK/big.json"
) >"$WORK/big.log" 2>&1 || fail "gpt on a 256 MiB text under a 600 MB data limit: $(tail -3 "$WORK/big.log")"
json_check "$WORK/big.json" '"big.txt" in r["workload"]["configuration"]["data"]'
rm -f "$WORK/big.txt"

# --- unknown options and --for ---
expect_usage "unknown option '--bogus'" -- --bogus
expect_usage "tbd suite --for ncf were refused.*--bogus" -- suite --workloads ncf --for 'ncf:--bogus'
expect_usage "tbd suite --for ncf were refused.*--iters" -- suite --workloads ncf --for 'ncf:--iters'
expect_usage "--for ncf: the quote ' is not closed" -- suite --workloads ncf --for "ncf:--set 'a=b"

# --- distributed environment ---
out="$(RANK=0 "$TBD" run ncf "${tiny[@]}" 2>&1)"
rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "WORLD_SIZE is not" || fail "RANK=0 without WORLD_SIZE: exit $rc: $out"

# --- signals at the edges ---
# SIGINT 50 ms after the start (the issue's reproducer) reaches the run: a
# background job of a script starts with SIGINT ignored, so a handler
# installed late lost it and the run completed with exit 0.
"$TBD" run resnet50 --scale tiny --warmup 2 --iters 2 --min-time 0.8 --repeat 4 --threads 1 --quiet \
  --out "$WORK/early.json" 2> "$WORK/early.err" &
pid=$!
sleep 0.05
kill -INT $pid
wait $pid
rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT at 50 ms: exit $rc, expected 130: $(cat "$WORK/early.err")"
# Stopped before any timed iteration: no result, and it says so.
[ ! -e "$WORK/early.json" ] || fail "a run stopped before its first timed iteration wrote a result"
grep -q "stopped by SIGINT before any timed iteration; no result written" "$WORK/early.err" ||
  fail "SIGINT at 50 ms: $(cat "$WORK/early.err")"

# tbd scale stopped by SIGINT: exit 130, and the points so far written, marked partial.
"$TBD" scale ncf --nproc 1,2 --scale tiny --warmup 0 --iters 1000000 --repeat 1 --threads 1 \
  --out "$WORK/scale.json" > "$WORK/scale.out" 2>&1 &
pid=$!
sleep 4
kill -INT $pid
timeout 60 tail --pid=$pid -f /dev/null
wait $pid
rc=$?
[ "$rc" -eq 130 ] || fail "scale after SIGINT: exit $rc, expected 130: $(cat "$WORK/scale.out")"
json_check "$WORK/scale.json" 'r["partial"] is True and [p["nproc"] for p in r["points"]] == [1] and r["points"][0]["result"]["partial"] is True'
grep -q "internal error" "$WORK/scale.out" && fail "scale: internal error"

# tbd predict --check stopped by SIGTERM while it measures: exit 143, the
# measurement under way stopped (the signal reaches the child), nothing
# after it started, no prediction file.
"$TBD" run ncf --scale tiny --warmup 1 --iters 2 --repeat 1 --threads 1 --quiet --out "$WORK/pbase.json" ||
  fail "the ncf base for predict exited $?"
"$TBD" predict "$WORK/pbase.json" --nproc 2 --check --dir "$WORK/pstop" --out "$WORK/pstop.json" > "$WORK/pstop.out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -e "$WORK/pstop/co-located-0-of-2.log" ] && break; sleep 0.05; done
kill -TERM $pid
timeout 60 tail --pid=$pid -f /dev/null
wait $pid
rc=$?
[ "$rc" -eq 143 ] || fail "predict --check after SIGTERM: exit $rc, expected 143: $(cat "$WORK/pstop.out")"
[ ! -e "$WORK/pstop.json" ] || fail "predict --check stopped by SIGTERM wrote a prediction"
grep -q "SIGTERM" "$WORK/pstop.out" || fail "predict --check after SIGTERM does not say so: $(cat "$WORK/pstop.out")"
[ ! -e "$WORK/pstop/nproc-2.log" ] || fail "predict --check started its check run after SIGTERM"

# A sweep's index is written after every point: SIGKILL during the second
# run still leaves sweep.json naming the first (it was written only at the end).
"$TBD" sweep ncf --batch-sizes 2,4 --scale tiny --warmup 0 --iters 1 --repeat 1 --min-time 2 --threads 1 \
  --out "$WORK/sweep" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -e "$WORK/sweep/logs/bs-4.log" ] && break; sleep 0.1; done
kill -KILL $pid
wait $pid 2> /dev/null
json_check "$WORK/sweep/sweep.json" '[p["batch_size"] for p in r["points"]] == [2] and r["points"][0]["status"] == "ok"'

finish
