# Helpers for the CLI tests: source it, then call the checks.
# Usage in a test: TBD=$1; source "$(dirname "$0")/lib.sh"
set -u
TBD="${1:?path to the tbd binary}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FAILURES=0

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# expect_exit CODE PATTERN -- ARGS...: runs tbd ARGS, checks the exit status
# and that stderr+stdout match PATTERN (grep -E).
expect_exit() {
  local code="$1" pattern="$2"
  shift 3
  local out rc
  out="$("$TBD" "$@" 2>&1)"
  rc=$?
  [ "$rc" -eq "$code" ] || fail "tbd $* exited $rc, expected $code; output: $out"
  echo "$out" | grep -Eq -- "$pattern" || fail "tbd $* output lacks /$pattern/: $out"
}

# json_check FILE PYTHON_EXPR: FILE parses as JSON and EXPR (over `r`) is true.
json_check() {
  python3 - "$1" "$2" <<'PY' || fail "JSON check failed on $1: $2"
import json, sys
r = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("expression false:", sys.argv[2], file=sys.stderr)
    sys.exit(1)
PY
}

# Every tbd document the test wrote under $WORK (results, sweep and suite
# indexes, scale and compare documents) must match its JSON Schema in
# docs/schema. Tests that write hand-made documents on purpose (fixtures of
# another shape) list them in SCHEMA_EXEMPT (a grep -E pattern of paths).
SCHEMA_EXEMPT="${SCHEMA_EXEMPT:-}"
validate_documents() {
  local venv="${TBD_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tbd-test-venv}" files
  files="$(grep -rlE --include='*.json' '"schema": ?"tbd\.' "$WORK" 2>/dev/null)"
  [ -n "$SCHEMA_EXEMPT" ] && files="$(echo "$files" | grep -vE "$SCHEMA_EXEMPT")"
  [ -z "$files" ] && return 0
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import jsonschema' 2>/dev/null; then
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } && "$venv/bin/pip" install -q jsonschema >/dev/null 2>&1 ||
      { fail "cannot install jsonschema from PyPI to validate the documents"; return; }
  fi
  # shellcheck disable=SC2086
  "$venv/bin/python" "$(dirname "${BASH_SOURCE[0]}")/validate_schema.py" $files > /dev/null ||
    fail "documents that do not match docs/schema (above)"
}

finish() {
  validate_documents
  if [ "$FAILURES" -gt 0 ]; then
    echo "$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
