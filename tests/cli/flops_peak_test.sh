#!/usr/bin/env bash
# CLI: --probes flops, `all`, unknown probes, and `tbd env --peak` with its cache.
# Usage: flops_peak_test.sh PATH/TO/tbd
set -u
TBD=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TBD_CACHE_DIR=$work/cache

"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 0 --threads 1 --probes bogus >"$work/out" 2>&1
[ $? -eq 2 ] || fail "unknown probe should exit 2"
grep -q "unknown probe 'bogus'" "$work/out" || fail "unknown probe message: $(cat "$work/out")"

# Without a cached peak: the measured utilisation is n/a with the reason.
"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 0 --threads 1 --probes flops --out "$work/r.json" >"$work/out" 2>&1 \
  || fail "run failed: $(cat "$work/out")"
grep -q "measured peak: n/a (no measured fp32 peak" "$work/out" || fail "summary lacks n/a peak: $(cat "$work/out")"
python3 - "$work/r.json" <<'PY' || fail "flops section"
import json, sys
f = json.load(open(sys.argv[1]))["flops"]
assert f["per_iteration"] == f["forward"] + f["backward"] + f["optimizer"] + f["outside_phases"], f
assert f["per_sample"] > 0 and f["achieved_flops_per_s"] > 0
assert f["utilization"]["measured"]["value"] is None and "tbd env --peak" in f["utilization"]["measured"]["not_available"]
PY

# Measure, then a run reports utilisation against it.
"$TBD" env --peak --threads 1 >"$work/peak" 2>&1 || fail "env --peak failed: $(cat "$work/peak")"
[ -f "$TBD_CACHE_DIR/peak.json" ] || fail "no cache file"
grep -q "GFLOP/s measured" "$work/peak" || fail "peak output: $(cat "$work/peak")"
"$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 0 --threads 1 --probes all --out "$work/r2.json" >"$work/out" 2>&1 \
  || fail "run --probes all failed: $(cat "$work/out")"
grep -q "of measured peak" "$work/out" || fail "summary lacks measured utilisation: $(cat "$work/out")"
python3 - "$work/r2.json" <<'PY' || fail "utilisation"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["flops"]
assert 0 < f["utilization"]["measured"] < 10, f["utilization"]
assert f["peak"]["measured"]["cache_file"].endswith("peak.json")
assert "flops" in r["probes"]
PY
echo ok
