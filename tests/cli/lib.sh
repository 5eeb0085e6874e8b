# Helpers for the CLI tests: source it, then call the checks.
# Usage in a test: TBD=$1; source "$(dirname "$0")/lib.sh"
set -u
TBD="${1:?path to the tbd binary}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FAILURES=0

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# running PID: true while PID runs. A zombie does not count: an orphan that
# was killed stays one until the machine's init reaps it, which some inits
# (firecracker's process_api) do only after a second or more.
running() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ "$state" != Z* ]]
}

# rank_pid LAUNCHER RANK: the pid of that rank once it has run for 3 s (empty if it never did).
rank_pid() {
  local pid=""
  for _ in $(seq 1 100); do
    sleep 0.2
    for p in $(pgrep -P "$1"); do
      tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "RANK=$2" && pid=$p
    done
    [ -n "$pid" ] && [ "$(ps -o etimes= -p "$pid" | tr -d ' ')" -ge 3 ] && break
  done
  echo "$pid"
}

# expect_killed_rank1_ends LAUNCHER ERR RESULT: SIGKILLs rank 1 of the local
# run LAUNCHER started (its stderr in ERR, its --out RESULT) and checks that
# the run ends within 30 s with exit 1, rank 0's error naming the lost rank,
# and no result file.
expect_killed_rank1_ends() {
  local launcher=$1 err=$2 result=$3 victim start rc
  victim=$(rank_pid "$launcher" 1)
  [ -n "$victim" ] || { fail "rank 1 never started"; return; }
  start=$(date +%s)
  kill -9 "$victim"
  wait "$launcher"
  rc=$?
  [ "$rc" -eq 1 ] || fail "killing rank 1 made the run exit $rc, expected 1"
  [ $(( $(date +%s) - start )) -lt 30 ] || fail "the surviving rank took more than 30 s to stop"
  grep -q "lost rank 1" "$err" || fail "rank 0 did not name the lost rank: $(cat "$err")"
  [ ! -e "$result" ] || fail "a failed distributed run left a result file"
}

# expect_stopped_rank0_ends LAUNCHER ERR: SIGSTOPs rank 0 of the local run
# LAUNCHER started (with --dist-timeout 5, its stderr in ERR) and checks
# that the run ends within 15 s with exit 1, rank 1's error naming the
# stopped rank.
expect_stopped_rank0_ends() {
  local launcher=$1 err=$2 rank0 start elapsed rc
  rank0=$(rank_pid "$launcher" 0)
  [ -n "$rank0" ] || { fail "rank 0 never started"; return; }
  kill -STOP "$rank0"
  start=$(date +%s)
  timeout 40 tail --pid="$launcher" -f /dev/null
  elapsed=$(( $(date +%s) - start ))
  if kill -0 "$launcher" 2>/dev/null; then
    fail "a stopped rank 0 hung the run for 40 s: $(cat "$err")"
    kill -9 "$launcher" "$rank0" 2>/dev/null
  fi
  wait "$launcher"
  rc=$?
  [ "$rc" -eq 1 ] || fail "a stopped rank 0 made the run exit $rc, expected 1"
  [ "$elapsed" -le 15 ] || fail "a stopped rank 0 took ${elapsed} s to end the run (--dist-timeout 5; limit 15 s)"
  grep -q "rank 0 (pid $rank0) is stopped" "$err" || fail "rank 1 did not name the stopped rank 0: $(cat "$err")"
}

# expect_exit CODE PATTERN -- ARGS...: runs tbd ARGS, checks the exit status
# and that stderr+stdout match PATTERN (grep -E).
expect_exit() {
  local code="$1" pattern="$2"
  shift 3
  local out rc
  out="$("$TBD" "$@" 2>&1)"
  rc=$?
  # Kept for finish()'s check that no input reached an internal error.
  echo "$out" >> "$WORK/.expect_exit.out"
  [ "$rc" -eq "$code" ] || fail "tbd $* exited $rc, expected $code; output: $out"
  echo "$out" | grep -Eq -- "$pattern" || fail "tbd $* output lacks /$pattern/: $out"
}

# json_check FILE PYTHON_EXPR: FILE parses as JSON and EXPR (over `r`) is true.
json_check() {
  python3 - "$1" "$2" <<'PY' || fail "JSON check failed on $1: $2"
import json, statistics, sys
r = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("expression false:", sys.argv[2], file=sys.stderr)
    sys.exit(1)
PY
}

# The Python venv of the tests' outside checkers (scipy, HTA, jsonschema):
# `test_venv MODULE PACKAGE...` makes sure MODULE imports there, installing
# the packages from PyPI when it does not, and prints the venv's python.
# CLI tests run in parallel: a lock beside the venv serialises creating it
# and installing into it.
TEST_VENV="${TBD_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tbd-test-venv}"
test_venv() {
  local module="$1"
  shift
  mkdir -p "$(dirname "$TEST_VENV")"
  (
    flock 9
    if [ ! -x "$TEST_VENV/bin/python" ]; then python3 -m venv "$TEST_VENV" || exit 1; fi
    "$TEST_VENV/bin/python" -c "import $module" 2>/dev/null && exit 0
    "$TEST_VENV/bin/pip" install -q "$@" > /dev/null 2>&1
  ) 9> "$TEST_VENV.lock" || { echo "cannot install $* from PyPI into $TEST_VENV" >&2; return 1; }
  echo "$TEST_VENV/bin/python"
}

# Every tbd document the test wrote under $WORK (results, sweep and suite
# indexes, scale and compare documents) must match its JSON Schema in
# docs/schema. Tests that write hand-made documents on purpose (fixtures of
# another shape) list them in SCHEMA_EXEMPT (a grep -E pattern of paths).
SCHEMA_EXEMPT="${SCHEMA_EXEMPT:-}"
validate_documents() {
  local python files
  files="$(grep -rlE --include='*.json' '"schema": ?"tbd\.' "$WORK" 2>/dev/null)"
  [ -n "$SCHEMA_EXEMPT" ] && files="$(echo "$files" | grep -vE "$SCHEMA_EXEMPT")"
  [ -z "$files" ] && return 0
  python="$(test_venv jsonschema jsonschema)" || { fail "cannot validate the documents without jsonschema"; return; }
  # shellcheck disable=SC2086
  "$python" "$(dirname "${BASH_SOURCE[0]}")/validate_schema.py" $files > /dev/null ||
    fail "documents that do not match docs/schema (above)"
}

# No input a test gives tbd may end in "tbd: internal error" (an exception
# tbd did not turn into a message): every output expect_exit captured, and
# every file the test left under $WORK (outputs it redirected, logs), is
# searched for it.
check_no_internal_error() {
  local hits
  hits="$(grep -rl --binary-files=without-match "tbd: internal error" "$WORK" 2>/dev/null)"
  [ -z "$hits" ] || fail "an internal error in the captured output of: $hits ($(grep -rh "tbd: internal error" $hits | head -n 3))"
}

finish() {
  validate_documents
  check_no_internal_error
  if [ "$FAILURES" -gt 0 ]; then
    echo "$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
