# The roofline probe end to end (docs/metrics.md#roofline): without measured
# ceilings it records the operators and says why it gives no verdicts; after
# `tbd env --peak` measures the ceilings (cached with the GEMM peaks) every
# operator gets a bound and a headroom, and the GEMMs of ncf's MLP are judged
# by the same rule as its elementwise operators.
SCHEMA_EXEMPT='/cache/'  # the peak cache is tbd.peak/1, not a result
source "$(dirname "$0")/lib.sh"
export TBD_CACHE_DIR="$WORK/cache"
quick=(--scale tiny --threads 1 --warmup 1 --iters 2 --repeat 2 --probes roofline --quiet)

"$TBD" run ncf "${quick[@]}" --out "$WORK/before.json" || fail "the run without ceilings exited $?"
json_check "$WORK/before.json" '"tbd env --peak" in r["roofline"]["verdicts_not_available"]'
json_check "$WORK/before.json" 'all(u["bound"] is None for u in r["roofline"]["by_op"]) and len(r["roofline"]["by_op"]) > 5'

expect_exit 0 "bandwidth .* GB/s measured" -- env --peak --threads 1
json_check "$WORK/cache/peak.json" 'all(m["memory_bandwidth"]["bytes_per_s"] > 0 and m["dispatch_overhead"]["seconds_per_op"] > 0 for m in r["machines"].values())'

"$TBD" run ncf "${quick[@]}" --out "$WORK/after.json" || fail "the run with ceilings exited $?"
json_check "$WORK/after.json" '"verdicts_not_available" not in r["roofline"] and r["roofline"]["ceilings"]["memory_bandwidth"]["bytes_per_s"] > 0'
json_check "$WORK/after.json" 'all(u["bound"] in ("compute", "memory", "overhead") and u["headroom_s"] >= 0 for u in r["roofline"]["by_op"])'
# ncf's MLP: GEMM units with their FLOPs, judged against the same ceilings.
json_check "$WORK/after.json" 'any(u["class"] == "gemm" and u["flops"] > 0 and u["intensity"] > 0 for u in r["roofline"]["by_op"])'
# The ops probe and the roofline probe side by side in the same iterations.
"$TBD" run ncf "${quick[@]/roofline/ops,roofline}" --out "$WORK/both.json" || fail "ops and roofline together exited $?"
json_check "$WORK/both.json" '"ops" in r and "roofline" in r'

finish
