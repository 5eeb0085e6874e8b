#!/usr/bin/env bash
# CLI: --probes flops, `all`, unknown probes, and `tbd env --peak` with its cache.
# Usage: flops_peak_test.sh PATH/TO/tbd
SCHEMA_EXEMPT='/cache/'  # the peak cache is tbd.peak/1, not a result
source "$(dirname "$0")/lib.sh"
export TBD_CACHE_DIR="$WORK/cache"
tiny=(--scale tiny --repeat 1 --iters 2 --warmup 0 --threads 1)

expect_exit 2 "unknown probe 'bogus'" -- run resnet50 "${tiny[@]}" --probes bogus

# Without a cached peak: the measured utilisation is n/a with the reason.
"$TBD" run resnet50 "${tiny[@]}" --probes flops --out "$WORK/r.json" >"$WORK/out" 2>&1 ||
  fail "run failed: $(cat "$WORK/out")"
grep -q "measured peak: n/a (no measured fp32 peak" "$WORK/out" || fail "summary lacks n/a peak: $(cat "$WORK/out")"
python3 - "$WORK/r.json" <<'PY' || fail "flops section"
import json, sys
f = json.load(open(sys.argv[1]))["flops"]
assert f["per_iteration"] == f["forward"] + f["backward"] + f["optimizer"] + f["outside_phases"], f
assert f["per_sample"] > 0 and f["achieved_flops_per_s"] > 0
assert f["utilization"]["measured"]["value"] is None and "tbd env --peak" in f["utilization"]["measured"]["not_available"]
PY

# Measure, then a run reports utilisation against it.
"$TBD" env --peak --threads 1 >"$WORK/peak" 2>&1 || fail "env --peak failed: $(cat "$WORK/peak")"
[ -f "$TBD_CACHE_DIR/peak.json" ] || fail "no cache file"
grep -q "GFLOP/s measured" "$WORK/peak" || fail "peak output: $(cat "$WORK/peak")"
"$TBD" run resnet50 "${tiny[@]}" --probes all --out "$WORK/r2.json" >"$WORK/out" 2>&1 ||
  fail "run --probes all failed: $(cat "$WORK/out")"
grep -q "of measured peak" "$WORK/out" || fail "summary lacks measured utilisation: $(cat "$WORK/out")"
json_check "$WORK/r2.json" '0 < r["flops"]["utilization"]["measured"] < 10'
json_check "$WORK/r2.json" 'r["flops"]["peak"]["measured"]["cache_file"].endswith("peak.json")'
json_check "$WORK/r2.json" '"flops" in r["probes"]'
finish
