#!/usr/bin/env bash
# CLI: gpu and energy probes say "n/a (reason)" without hardware, and energy
# reads a fake RAPL tree given by TBD_POWERCAP_DIR.
# Usage: gpu_energy_test.sh PATH/TO/tbd
set -u
TBD=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/powercap/intel-rapl:0"
echo package-0 >"$work/powercap/intel-rapl:0/name"
echo 1000 >"$work/powercap/intel-rapl:0/energy_uj"
echo 262143328850 >"$work/powercap/intel-rapl:0/max_energy_range_uj"
TBD_POWERCAP_DIR=$work/powercap "$TBD" run resnet50 --scale tiny --repeat 1 --iters 2 --warmup 0 --threads 1 \
  --probes gpu,energy --out "$work/r.json" >"$work/out" 2>&1 || fail "run failed: $(cat "$work/out")"
python3 - "$work/r.json" <<'PY' || fail "sections"
import json, sys
r = json.load(open(sys.argv[1]))
e, g = r["energy"], r["gpu"]
assert e["sources"]["rapl"]["zones"] == ["package-0"], e
assert e["sources"]["rapl"]["joules"] == 0 and e["joules_per_sample"] == 0  # the fake counter never moved
assert g["not_available"], g
PY
# No source at all: n/a with the reason, never a zero.
TBD_POWERCAP_DIR=$work/none "$TBD" run resnet50 --scale tiny --repeat 1 --iters 1 --warmup 0 --threads 1 \
  --probes energy >"$work/out" 2>&1 || fail "run failed: $(cat "$work/out")"
grep -q "energy *n/a (no energy source" "$work/out" || fail "energy line: $(cat "$work/out")"
echo ok
