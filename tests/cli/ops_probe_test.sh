#!/usr/bin/env bash
# CLI: --probes ops adds an `ops` section and a top-ops table to the summary.
# Usage: ops_probe_test.sh PATH/TO/tbd
source "$(dirname "$0")/lib.sh"
"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 1 --threads 1 --probes ops --out "$WORK/r.json" \
  >"$WORK/out" 2>&1 || fail "run failed: $(cat "$WORK/out")"
grep -q "top ops" "$WORK/out" || fail "summary lacks top ops: $(cat "$WORK/out")"
grep -q "aten::convolution_backward" "$WORK/out" || fail "top ops lacks convolution_backward: $(cat "$WORK/out")"
python3 - "$WORK/r.json" <<'PY' || fail "ops section"
import json, sys
o = json.load(open(sys.argv[1]))["ops"]
classes = {"conv", "gemm", "rnn", "attention", "norm", "elementwise", "reduction", "data movement",
           "optimizer", "communication", "other"}
assert set(o["by_class"]) == classes, o["by_class"].keys()
assert abs(sum(c["self_s"] for c in o["by_class"].values()) - o["total_self_s"]) < 1e-9
assert all(r["class"] in classes and r["calls"] > 0 for r in o["by_op"])
PY
finish
