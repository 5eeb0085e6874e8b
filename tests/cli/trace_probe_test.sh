#!/usr/bin/env bash
# CLI: --trace FILE writes a Chrome trace with nested tbd phase events;
# an unwritable path is a usage error (exit 2) before the run.
# Usage: trace_probe_test.sh PATH/TO/tbd
source "$(dirname "$0")/lib.sh"

expect_exit 2 "does not exist" -- run resnet50 --scale tiny --repeat 1 --iters 1 --warmup 0 --threads 1 \
  --trace /nonexistent-dir/t.json

"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 1 --threads 1 --trace "$WORK/t.json" --trace-iters 2 \
  --out "$WORK/r.json" >"$WORK/out" 2>&1 || fail "run failed: $(cat "$WORK/out")"
grep -q "trace .*t.json" "$WORK/out" || fail "summary lacks the trace line: $(cat "$WORK/out")"
python3 - "$WORK/t.json" "$WORK/r.json" <<'PY' || fail "trace content"
import json, sys
doc = json.load(open(sys.argv[1]))
events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
phases = [e for e in events if e["name"].startswith("tbd::")]
assert sorted(e["name"] for e in phases) == sorted(["tbd::forward", "tbd::backward", "tbd::optimizer"] * 2), phases
# Every op that starts inside a phase on its thread ends inside it.
inside = 0
for p in phases:
    for e in events:
        if e is p or (e["pid"], e["tid"]) != (p["pid"], p["tid"]):
            continue
        if p["ts"] <= e["ts"] < p["ts"] + p["dur"]:
            assert e["ts"] + e["dur"] <= p["ts"] + p["dur"] + 1, (e["name"], p["name"])
            inside += 1
assert inside > 50, inside
r = json.load(open(sys.argv[2]))
assert r["trace"]["iterations"] == 2 and r["summary"]["n"] == 2
PY
finish
