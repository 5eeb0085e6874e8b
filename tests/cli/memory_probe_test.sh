#!/usr/bin/env bash
# CLI: --probes memory adds a `memory` section whose breakdown sums to the peak.
# Usage: memory_probe_test.sh PATH/TO/tbd
source "$(dirname "$0")/lib.sh"
"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 1 --threads 1 --probes memory --out "$WORK/r.json" \
  >"$WORK/out" 2>&1 || fail "run failed: $(cat "$WORK/out")"
grep -q "peak memory" "$WORK/out" || fail "summary lacks peak memory: $(cat "$WORK/out")"
grep -q "feature_maps" "$WORK/out" || fail "summary lacks the breakdown: $(cat "$WORK/out")"
python3 - "$WORK/r.json" <<'PY' || fail "memory section"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert m["unit"] == "bytes"
assert sum(m["breakdown"].values()) == m["peak_bytes"], m
assert set(m["breakdown"]) == {"weights", "weight_gradients", "optimizer_state", "inputs",
                               "feature_maps", "workspace", "dynamic", "other"}
tl = m["timeline"]
assert len(tl["t_s"]) == len(tl["event"]) and "peak" in tl["event"]
assert max(sum(v[i] for v in tl["bytes"].values()) for i in range(len(tl["t_s"]))) == m["peak_bytes"]
assert set(m["phase_peak_bytes"]) == {"forward", "backward", "optimizer"}
assert max(m["phase_peak_bytes"].values()) <= m["peak_bytes"], m["phase_peak_bytes"]
PY
finish
