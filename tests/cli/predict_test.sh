# tbd predict (docs/analysis.md#tbd-predict, docs/metrics.md#prediction):
# the data-parallel replay against a real 2-rank run, Amdahl for a faster
# class, the memory line against tbd sweep, and every refusal. How close the
# predictions come is graded by bench/predict_grading.sh, not asserted here.
source "$(dirname "$0")/lib.sh"
quick=(--scale tiny --threads 1 --warmup 1 --iters 3 --repeat 2 --quiet)

"$TBD" run ncf "${quick[@]}" --probes time,memory,gradients,ops --out "$WORK/base.json" || fail "the base run exited $?"
json_check "$WORK/base.json" 'len(r["gradients"]["backward_passes"]) == 1 and all(f is None or 0 <= f <= 1 for f in r["gradients"]["backward_passes"][0]["ready_fraction"])'

# N = 2 on this machine, with the real run beside it (the prediction kept in its folder for the report).
mkdir -p "$WORK/p"
"$TBD" predict "$WORK/base.json" --nproc 2 --check --dir "$WORK/p" --out "$WORK/p/prediction.json" > "$WORK/p.txt" ||
  fail "predict --nproc 2 --check exited $?: $(cat "$WORK/p.txt")"
grep -q "2 ranks:" "$WORK/p.txt" || fail "no prediction line: $(cat "$WORK/p.txt")"
p='r["predictions"][0]'
json_check "$WORK/p/prediction.json" "$p[\"kind\"] == \"data_parallel\" and $p[\"ranks\"] == 2"
# The terms add up to the iteration; throughput follows it; the error is predicted / measured - 1.
json_check "$WORK/p/prediction.json" "abs(sum(v for k, v in $p[\"iteration_ms\"].items() if k != \"total\") - $p[\"iteration_ms\"][\"total\"]) < 1e-6 * $p[\"iteration_ms\"][\"total\"]"
json_check "$WORK/p/prediction.json" "abs($p[\"global_samples_per_s\"] - 2 * $p[\"per_rank_samples_per_s\"]) < 1e-6 * $p[\"global_samples_per_s\"]"
json_check "$WORK/p/prediction.json" "abs($p[\"check\"][\"error\"] - ($p[\"global_samples_per_s\"] / $p[\"check\"][\"measured_global_samples_per_s\"] - 1)) < 1e-9"
# What it measured here: co-located copies of the base, the buckets' all-reduce, the real run.
for f in co-located-0-of-2.json co-located-1-of-2.json allreduce-2-ranks.json nproc-2.json; do
  [ -s "$WORK/p/$f" ] || fail "predict --dir lacks $f"
done
json_check "$WORK/p/nproc-2.json" 'r["distributed"]["world_size"] == 2 and r["workload"]["options"]["threads"] == 1'

# The communication's cost is measured in context: the step's schedule on a
# stand-in, the median over adjacent blocks of cycles with it minus without;
# it is the iteration's term.
# Sparse gradients (dlrm's tables) go on their own when backward ends.
"$TBD" run dlrm "${quick[@]}" --probes time,gradients --out "$WORK/dlrm.json" || fail "the dlrm base run exited $?"
"$TBD" predict "$WORK/dlrm.json" --nproc 2 --dir "$WORK/d" --json > "$WORK/d.json" 2>"$WORK/d.txt" ||
  fail "predict --nproc 2 of dlrm exited $?: $(cat "$WORK/d.txt")"
s='r["predictions"][0]["measured_here"]["in_context"]'
json_check "$WORK/d.json" "abs($s[\"seconds\"] - max(0, statistics.median(w - a for w, a in zip($s[\"block_with_communication_seconds\"], $s[\"block_stand_in_seconds\"])))) < 1e-12 and len($s[\"block_stand_in_seconds\"]) >= 3 and $s[\"back_to_back_seconds\"] > 0 and $s[\"sparse_back_to_back_seconds\"] > 0"
json_check "$WORK/d.json" "abs(r[\"predictions\"][0][\"iteration_ms\"][\"communication_exposed\"] - 1e3 * $s[\"seconds\"]) < 1e-9 and r[\"predictions\"][0][\"communication_source\"] == \"measured in context\""
json_check "$WORK/d.json" "abs(r[\"predictions\"][0][\"sparse_allreduce_ms\"] - 1e3 * $s[\"sparse_back_to_back_seconds\"]) < 1e-9"
grep -q "beside the last bucket" "$WORK/d.txt" || fail "no sparse all-reduce line: $(cat "$WORK/d.txt")"

# The tables placed across the ranks (--embedding-sharding row): no sparse
# all-reduce; the placed lookups timed among the ranks (their four
# all-to-alls inside) against the same bags from whole tables, the
# difference added to the iteration; the all-to-alls' bytes as the check
# run's comm probe counts them (row-wise every rank sends the same).
"$TBD" predict "$WORK/dlrm.json" --nproc 2 --embedding-sharding row --check --dir "$WORK/e" --json > "$WORK/e.json" 2>"$WORK/e.txt" ||
  fail "predict --embedding-sharding row exited $?: $(cat "$WORK/e.txt")"
p='r["predictions"][0]'
json_check "$WORK/e.json" "$p[\"embedding_sharding\"] == \"row\" and $p[\"sparse_allreduce_ms\"] == 0 and $p[\"measured_here\"][\"placed_lookups\"][\"placed_s\"] > 0 and $p[\"measured_here\"][\"placed_lookups\"][\"replicated_s\"] > 0"
json_check "$WORK/e.json" "abs($p[\"iteration_ms\"][\"embedding_placement\"] - 1e3 * ($p[\"measured_here\"][\"placed_lookups\"][\"placed_s\"] - $p[\"measured_here\"][\"placed_lookups\"][\"replicated_s\"])) < 1e-9"
json_check "$WORK/e.json" "$p[\"embedding_all_to_all_bytes\"] == $p[\"check\"][\"measured_comm\"][\"all_to_all\"][\"bytes_per_iteration\"]"
json_check "$WORK/e.json" "abs(sum(v for k, v in $p[\"iteration_ms\"].items() if k != \"total\") - $p[\"iteration_ms\"][\"total\"]) < 1e-6 * $p[\"iteration_ms\"][\"total\"]"
[ -s "$WORK/e/nproc-2-embedding-sharding-row.json" ] || fail "no check run nproc-2-embedding-sharding-row.json"
grep -q "embedding tables placed row-wise" "$WORK/e.txt" || fail "no placement line: $(cat "$WORK/e.txt")"
expect_exit 2 "give --nproc N" -- predict "$WORK/dlrm.json" --embedding-sharding table
expect_exit 2 "plan each rank.s with tbd plan dlrm" -- predict "$WORK/dlrm.json" --nproc 2 --embedding-sharding row --device-memory 8G
expect_exit 2 "ncf has no embedding tables to place across ranks" -- predict "$WORK/base.json" --nproc 2 --embedding-sharding table

# Planned past this machine: the ring model, deterministic. Overlap off exposes
# every all-reduce; with overlap on, never more.
"$TBD" predict "$WORK/base.json" --nproc 4 --bus-gbps 1 --latency-us 50 --bucket-mb 0.05 --dist-overlap off --json > "$WORK/off.json" 2>/dev/null ||
  fail "predict --bus-gbps (overlap off) exited $?"
"$TBD" predict "$WORK/base.json" --nproc 4 --bus-gbps 1 --latency-us 50 --bucket-mb 0.05 --json > "$WORK/on.json" 2>/dev/null ||
  fail "predict --bus-gbps exited $?"
json_check "$WORK/off.json" 'abs(r["predictions"][0]["iteration_ms"]["communication_exposed"] - sum(b["end_ms"] - b["start_ms"] for b in r["predictions"][0]["backward_passes"][0]["buckets"])) < 1e-6'
json_check "$WORK/off.json" 'all(abs((b["end_ms"] - b["start_ms"]) - (0.05 + 2 * 3 / 4 * b["bytes"] / 1e9 * 1e3)) < 1e-9 for b in r["predictions"][0]["backward_passes"][0]["buckets"])'
python3 - "$WORK/on.json" "$WORK/off.json" <<'PY' || fail "overlap on exposed more all-reduce time than overlap off"
import json, sys
on, off = (json.load(open(f))["predictions"][0]["iteration_ms"]["communication_exposed"] for f in sys.argv[1:])
sys.exit(0 if on <= off + 1e-9 else 1)
PY
json_check "$WORK/on.json" 'len(r["predictions"][0]["backward_passes"][0]["buckets"]) > 1'

# A class twice as fast, by Amdahl's law over its share.
"$TBD" predict "$WORK/base.json" --faster gemm=2 --json > "$WORK/f.json" 2>/dev/null || fail "predict --faster exited $?"
json_check "$WORK/f.json" 'abs(r["predictions"][0]["iteration_ms"] - r["predictions"][0]["base_iteration_ms"] * (1 - r["predictions"][0]["classes"][0]["share_of_self"] / 2)) < 1e-6'

# The memory line against tbd sweep --memory-limit: within one doubling step.
"$TBD" predict "$WORK/base.json" --memory-limit 24M --check --dir "$WORK/m" --json > "$WORK/m.json" 2>/dev/null ||
  fail "predict --memory-limit --check exited $?"
json_check "$WORK/m.json" 'r["predictions"][0]["check"]["doubling_steps_off"] is not None and abs(r["predictions"][0]["check"]["doubling_steps_off"]) <= 1'

# The report shows the prediction beside its check.
"$TBD" report "$WORK/p" > "$WORK/report.md" || fail "report of the prediction folder exited $?"
grep -q "| ncf tiny .* | 2 data-parallel ranks |" "$WORK/report.md" || fail "no prediction row in the report: $(grep -A4 Predictions "$WORK/report.md")"

# Refusals.
expect_exit 2 "nothing to predict" -- predict "$WORK/base.json"
expect_exit 2 "--nproc must be at least 2" -- predict "$WORK/base.json" --nproc 1
expect_exit 2 "CLASS=FACTOR" -- predict "$WORK/base.json" --faster gemm
expect_exit 2 "unknown operator class 'convolution'" -- predict "$WORK/base.json" --faster convolution=2
expect_exit 2 "--memory-limit takes a size" -- predict "$WORK/base.json" --memory-limit lots
expect_exit 2 "no such file|does not exist|not found" -- predict "$WORK/none.json" --nproc 2
"$TBD" run ncf "${quick[@]}" --probes time --out "$WORK/bare.json"
expect_exit 1 "no gradient timeline.*--probes" -- predict "$WORK/bare.json" --nproc 2
expect_exit 1 "no operator classes.*ops probe" -- predict "$WORK/bare.json" --faster gemm=2
# A base without phase times (an older result): refused before any worker measures.
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); del r["phases"]; json.dump(r, open(sys.argv[2], "w"))' \
  "$WORK/dlrm.json" "$WORK/nophases.json"
expect_exit 1 "no phase times \(an older result\)" -- predict "$WORK/nophases.json" --nproc 2 --dir "$WORK/np"
[ ! -e "$WORK/np/allreduce-2-ranks.json" ] || fail "the all-reduce was measured for a base the prediction refuses"
# A base whose step replayed as a CUDA graph (a GPU run's, written here by
# hand): its ranks would run eagerly, so --nproc is refused before any worker.
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["framework"]["cuda_graphs"]["used"] = True; json.dump(r, open(sys.argv[2], "w"))' \
  "$WORK/base.json" "$WORK/graphed.json"
expect_exit 2 "replayed its step as a CUDA graph.*--cuda-graphs off" -- predict "$WORK/graphed.json" --nproc 2 --dir "$WORK/gp"
[ ! -e "$WORK/gp/allreduce-2-ranks.json" ] || fail "the all-reduce was measured for a graphed base the prediction refuses"
"$TBD" run ncf "${quick[@]}" --nproc 2 --out "$WORK/two.json"
expect_exit 2 "itself a 2-rank run" -- predict "$WORK/two.json" --nproc 2 --bus-gbps 10
"$TBD" run a3c "${quick[@]}" --batch-size 2 --out "$WORK/a3c.json"
expect_exit 2 "a3c does not run data-parallel" -- predict "$WORK/a3c.json" --nproc 2

finish
