# CLI conventions (issue 16, part 5): --version, the `tbd: error:` prefix
# with exit 2 for every usage error (CLI11's own too), --out checked for
# the kind of path each command writes, --json on stdout for scale, sweep
# and suite, and nothing but tbd's own lines on stderr under --quiet.
source "$(dirname "$0")/lib.sh"

out="$("$TBD" --version)" || fail "--version exited $?"
echo "$out" | grep -Eq '^tbd [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]+(-dirty)?\), LibTorch [0-9.]+' ||
  fail "--version printed: $out"

# CLI11's parse errors, in tbd's form.
expect_exit 2 '^tbd: error: .*--bogus.*see tbd run --help' -- run ncf --bogus
expect_exit 2 '^tbd: error: .*workload is required' -- run
expect_exit 2 '^tbd: error: .*--iters.*' -- run ncf --iters many
expect_exit 2 '^tbd: error: unknown command' -- frobnicate

# --out: a file for run and scale, a folder for sweep and suite.
mkdir -p "$WORK/existing"
expect_exit 2 'is a folder; this command writes one file' -- run ncf --scale tiny --out "$WORK/existing"
expect_exit 2 'is a folder; this command writes one file' -- run ncf --scale tiny --out "$WORK/new/"
expect_exit 2 'is a folder' -- scale ncf --scale tiny --out "$WORK/existing"
expect_exit 2 'looks like a file name, but tbd sweep writes a results folder' -- \
  sweep ncf --scale tiny --batch-sizes 2 --out "$WORK/sweep.json"
[ -e "$WORK/sweep.json" ] && fail "--out sweep.json was created"
touch "$WORK/a-file"
expect_exit 2 'is a file, but tbd suite writes a results folder' -- suite --workloads ncf --out "$WORK/a-file"

# --json: the document alone on stdout, the human summary on stderr.
quick=(--scale tiny --iters 1 --warmup 0 --repeat 2 --probes time)
"$TBD" sweep ncf --batch-sizes 2,4 --out "$WORK/sw" --json "${quick[@]}" > "$WORK/sweep.stdout" 2> "$WORK/sweep.stderr" ||
  fail "sweep --json exited $?: $(cat "$WORK/sweep.stderr")"
json_check "$WORK/sweep.stdout" 'r["schema"] == "tbd.sweep/1" and [p["batch_size"] for p in r["points"]] == [2, 4]'
grep -q "largest batch size that fits" "$WORK/sweep.stderr" || fail "sweep --json: the table is not on stderr"
"$TBD" suite --workloads ncf --out "$WORK/su" --json --for "ncf:--scale tiny --iters 1 --warmup 0 --repeat 2" \
  > "$WORK/suite.stdout" 2> "$WORK/suite.stderr" || fail "suite --json exited $?: $(cat "$WORK/suite.stderr")"
json_check "$WORK/suite.stdout" 'r["schema"] == "tbd.suite/1" and [x["status"] for x in r["runs"]] == ["ok"]'
grep -q "1 ok" "$WORK/suite.stderr" || fail "suite --json: the summary is not on stderr"
"$TBD" scale ncf --nproc 1 --json "${quick[@]}" > "$WORK/scale.stdout" 2> "$WORK/scale.stderr" ||
  fail "scale --json exited $?: $(cat "$WORK/scale.stderr")"
json_check "$WORK/scale.stdout" 'r["schema"] == "tbd.scale/1" and r["points"][0]["nproc"] == 1'
grep -q "efficiency" "$WORK/scale.stderr" || fail "scale --json: the table is not on stderr"

# --quiet: nothing on stderr, not even Kineto's profiler_start/stop lines around a trace.
"$TBD" run ncf "${quick[@]}" --trace "$WORK/trace.json" --quiet > "$WORK/quiet.stdout" 2> "$WORK/quiet.stderr" ||
  fail "run --quiet --trace exited $?"
[ -s "$WORK/quiet.stderr" ] && fail "stderr under --quiet: $(cat "$WORK/quiet.stderr")"
[ -s "$WORK/trace.json" ] || fail "no trace written"

finish
