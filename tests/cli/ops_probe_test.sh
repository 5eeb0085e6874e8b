#!/usr/bin/env bash
# CLI: --probes ops adds an `ops` section and a top-ops table to the summary.
# Usage: ops_probe_test.sh PATH/TO/tbd
set -u
TBD=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 1 --threads 1 --probes ops --out "$work/r.json" >"$work/out" 2>&1 \
  || fail "run failed: $(cat "$work/out")"
grep -q "top ops" "$work/out" || fail "summary lacks top ops: $(cat "$work/out")"
grep -q "aten::convolution_backward" "$work/out" || fail "top ops lacks convolution_backward: $(cat "$work/out")"
python3 - "$work/r.json" <<'PY' || fail "ops section"
import json, sys
o = json.load(open(sys.argv[1]))["ops"]
classes = {"conv", "gemm", "rnn", "attention", "norm", "elementwise", "reduction", "data movement",
           "optimizer", "communication", "other"}
assert set(o["by_class"]) == classes, o["by_class"].keys()
assert abs(sum(c["self_s"] for c in o["by_class"].values()) - o["total_self_s"]) < 1e-9
assert all(r["class"] in classes and r["calls"] > 0 for r in o["by_op"])
PY
echo ok
