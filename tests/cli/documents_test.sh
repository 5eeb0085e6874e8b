# Broken result documents (issue 29): numbers as strings, arrays as
# scalars, figures out of range, lists whose lengths disagree. tbd report,
# compare and predict refuse each, naming the file, the field and the rule,
# instead of an internal error or figures computed from nonsense. Exit
# status as for any unreadable document: report and predict 1, compare 2
# (its 1 means a regression). tests/document_mutation_test.cpp does the
# same for every field of every document kind.
source "$(dirname "$0")/lib.sh"
# The broken documents are broken on purpose.
SCHEMA_EXEMPT="/bad/"

"$TBD" run resnet50 --scale tiny --iters 1 --warmup 0 --repeat 1 --quiet --out "$WORK/base.json" ||
  fail "the base run exited $?"

# mutate NAME PYTHON: $WORK/bad/NAME/r.json is base.json after PYTHON (over `r`).
mutate() {
  mkdir -p "$WORK/bad/$1"
  python3 - "$WORK/base.json" "$WORK/bad/$1/r.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PY
}

# refused NAME PATTERN: report (both formats), compare and predict refuse it with PATTERN.
refused() {
  local f="$WORK/bad/$1/r.json"
  expect_exit 1 "$f: $2" -- report "$f"
  expect_exit 1 "$f: $2" -- report "$WORK/bad/$1" --format html --out "$WORK/$1.html"
  [ ! -e "$WORK/$1.html" ] || fail "report of $1 wrote $WORK/$1.html"
  expect_exit 2 "$f: $2" -- compare "$WORK/base.json" "$f"
  expect_exit 1 "$f: $2" -- predict "$f" --nproc 2 --bus-gbps 10
}

mutate nan_string 'r["throughput"]["samples_per_s"] = "NaN"'
refused nan_string "field 'throughput.samples_per_s' must be a number > 0 or null, found \"NaN\" \(a string\)"
mutate negative_rate 'r["throughput"]["samples_per_s"] = -5'
refused negative_rate "field 'throughput.samples_per_s' must be a number > 0 or null, found -5"
mutate elements_string 'r["gradients"]["elements"] = "many"'
refused elements_string "field 'gradients.elements' must be an array, found \"many\" \(a string\)"
mutate no_iterations 'r["iterations"] = []'
refused no_iterations "field 'iterations' must be a non-empty array"
mutate zero_iterations 'r["iterations"] = [0.0 for _ in r["iterations"]]'
refused zero_iterations "field 'iterations\[0\]' must be a number > 0, found 0"
mutate repetitions_length 'r["iteration_repetitions"] = r["iteration_repetitions"] + [0]'
refused repetitions_length "field 'iteration_repetitions' must be an array of one entry per entry of 'iterations' \(1\), but it holds 2"
mutate negative_samples 'r["iteration_samples"] = [-4.0]'
refused negative_samples "field 'iteration_samples\[0\]' must be a number >= 0, found -4"

# A workload this tbd does not know: the file that names it is named.
mutate bogus_workload 'r["workload"]["name"] = "bogus"'
expect_exit 2 "bogus_workload/r.json: unknown workload 'bogus'" -- predict "$WORK/bad/bogus_workload/r.json" --nproc 2 --bus-gbps 10

# The base itself still serves every command.
expect_exit 0 "" -- report "$WORK/base.json"
expect_exit 0 "" -- compare "$WORK/base.json" "$WORK/base.json"
expect_exit 0 "" -- predict "$WORK/base.json" --nproc 2 --bus-gbps 10

finish
