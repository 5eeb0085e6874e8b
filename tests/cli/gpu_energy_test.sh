#!/usr/bin/env bash
# CLI: gpu and energy probes say "n/a (reason)" without hardware, and energy
# reads a fake RAPL tree given by TBD_POWERCAP_DIR.
# Usage: gpu_energy_test.sh PATH/TO/tbd
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --repeat 1 --warmup 0 --threads 1)

zone="$WORK/powercap/intel-rapl:0"
mkdir -p "$zone"
echo package-0 >"$zone/name"
echo 1000 >"$zone/energy_uj"
echo 262143328850 >"$zone/max_energy_range_uj"
TBD_POWERCAP_DIR="$WORK/powercap" "$TBD" run resnet50 "${tiny[@]}" --iters 2 --probes gpu,energy --out "$WORK/r.json" \
  >"$WORK/out" 2>&1 || fail "run failed: $(cat "$WORK/out")"
json_check "$WORK/r.json" 'r["energy"]["sources"]["rapl"]["zones"] == ["package-0"]'
# The fake counter never moved.
json_check "$WORK/r.json" 'r["energy"]["sources"]["rapl"]["joules"] == 0 and r["energy"]["joules_per_sample"] == 0'
json_check "$WORK/r.json" 'bool(r["gpu"]["not_available"])'

# No source at all: n/a with the reason, never a zero.
TBD_POWERCAP_DIR="$WORK/none" "$TBD" run resnet50 "${tiny[@]}" --iters 1 --probes energy >"$WORK/out" 2>&1 ||
  fail "run failed: $(cat "$WORK/out")"
grep -q "energy *n/a (no energy source" "$WORK/out" || fail "energy line: $(cat "$WORK/out")"
finish
