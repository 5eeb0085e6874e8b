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

finish() {
  if [ "$FAILURES" -gt 0 ]; then
    echo "$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
