# tbd sweep, suite and the logs: the auto sweep stops at a (simulated)
# out-of-memory through --memory-limit, suite resume and --force, a failing
# workload recorded while the suite goes on, --mllog and --csv parsed back,
# and a report of the real results.
source "$(dirname "$0")/lib.sh"
quick=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 2)

# --- tbd run --mllog / --csv -------------------------------------------------
expect_exit 0 "throughput" -- run resnet50 "${quick[@]}" --batch-size 2 --mllog "$WORK/run.mllog" --csv "$WORK/runs.csv"
expect_exit 0 "throughput" -- run resnet50 "${quick[@]}" --batch-size 4 --mllog "$WORK/run.mllog" --csv "$WORK/runs.csv"
python3 - "$WORK/run.mllog" "$WORK/runs.csv" <<'PY' || fail "the MLLOG or CSV log does not read back"
import csv, json, sys
events = []
for line in open(sys.argv[1]):
    assert line.startswith(":::MLLOG {"), line
    e = json.loads(line[len(":::MLLOG "):])
    assert list(e) == ["namespace", "time_ms", "event_type", "key", "value", "metadata"], list(e)
    assert e["event_type"] in ("INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME")
    assert "file" in e["metadata"] and "lineno" in e["metadata"]
    events.append(e)
keys = [e["key"] for e in events]
assert keys.count("run_start") == 2 and keys.count("run_stop") == 2, keys
assert [e["value"] for e in events if e["key"] == "global_batch_size"] == [2, 4]
assert [e["value"] for e in events if e["key"] == "submission_benchmark"] == ["resnet", "resnet"]  # MLPerf's name
start, stop = events[0], [e for e in events if e["key"] == "run_stop"][0]
assert start["time_ms"] <= stop["time_ms"] and stop["metadata"]["status"] == "success"
assert any(e["key"] == "opt_base_learning_rate" for e in events)
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 2, rows
assert [r["batch_size"] for r in rows] == ["2", "4"]
assert all(r["workload"] == "resnet50" and float(r["samples_per_s"]) > 0 and int(r["iterations"]) == 2 for r in rows)
assert all(float(r["median_s"]) > 0 and int(r["peak_memory_bytes"]) > 0 for r in rows)
PY
expect_exit 2 "mllog .* does not exist" -- run resnet50 "${quick[@]}" --mllog "$WORK/missing/x.log"

# --- tbd sweep ---------------------------------------------------------------
# A fixed list: one result per batch size, a sweep index, the table.
# (batch 1 cannot train resnet50: batch norm needs two values per channel.)
expect_exit 0 "largest batch size that fits: 4" -- sweep resnet50 --batch-sizes 2,4 --out "$WORK/sweep-list" "${quick[@]}"
json_check "$WORK/sweep-list/sweep.json" 'r["schema"] == "tbd.sweep/1" and [p["status"] for p in r["points"]] == ["ok", "ok"]'
[ -f "$WORK/sweep-list/bs-2.json" ] && [ -f "$WORK/sweep-list/bs-4.json" ] || fail "the sweep did not write bs-2/bs-4.json"
json_check "$WORK/sweep-list/bs-4.json" 'r["workload"]["options"]["batch_size"] == 4'

# auto with a memory limit between the peaks of batch 4 and batch 8: batch 8
# is recorded as out of memory, the doubling stops, 4 is the largest that fits.
peak4=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["peak_bytes"])' "$WORK/sweep-list/bs-4.json")
peak2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["peak_bytes"])' "$WORK/sweep-list/bs-2.json")
limit=$((peak4 + (peak4 - peak2) / 2))  # the peak grows about linearly with the batch
expect_exit 0 "largest batch size that fits: 4" -- \
  sweep resnet50 --batch-sizes auto --start 2 --memory-limit "$limit" --out "$WORK/sweep-auto" "${quick[@]}"
json_check "$WORK/sweep-auto/sweep.json" '[p["batch_size"] for p in r["points"]] == [2, 4, 8]'
json_check "$WORK/sweep-auto/sweep.json" '[p["status"] for p in r["points"]] == ["ok", "ok", "out_of_memory"]'
json_check "$WORK/sweep-auto/sweep.json" 'r["largest_fitting_batch"] == 4 and "out of memory at batch size 8" in r["stopped_by"]'
json_check "$WORK/sweep-auto/sweep.json" '"exceeds the limit" in r["points"][2]["error"] and r["memory_limit_bytes"] > 0'
[ ! -e "$WORK/sweep-auto/bs-8.json" ] || fail "the over-limit run left a result file a report would plot"
# A list stops at the first out-of-memory size too, the rest recorded as skipped.
expect_exit 0 "skipped" -- sweep resnet50 --batch-sizes 2,8,16 --memory-limit "$limit" --out "$WORK/sweep-skip" "${quick[@]}"
json_check "$WORK/sweep-skip/sweep.json" '[p["status"] for p in r["points"]] == ["ok", "out_of_memory", "skipped"]'
# Nothing fits: exit 1.
expect_exit 1 "no batch size ran to completion" -- \
  sweep resnet50 --batch-sizes 2 --memory-limit 1K --out "$WORK/sweep-none" "${quick[@]}"
expect_exit 2 "batch-sizes takes 'auto' or a comma-separated list" -- sweep resnet50 --batch-sizes 1,x
expect_exit 2 "memory-limit takes a size" -- sweep resnet50 --memory-limit lots
expect_exit 2 "sets --batch-size of its runs itself" -- sweep resnet50 --batch-size 4
expect_exit 2 "unknown workload" -- sweep nosuch
expect_exit 2 "were refused: .*unknown setting" -- sweep resnet50 --batch-sizes 2 --out "$WORK/sweep-bad" "${quick[@]}" --set width=3

# --- tbd suite -----------------------------------------------------------------
# resnet50 reads a corrupt dataset and fails; ncf still runs; exit 1.
mkdir -p "$WORK/data/cat"
echo "not a jpeg" > "$WORK/data/cat/bad.jpg"
suite=(suite --workloads ncf,resnet50 --out "$WORK/suite" "${quick[@]}" --for "resnet50:--data $WORK/data"
       --mllog "$WORK/suite.mllog" --csv "$WORK/suite.csv")
expect_exit 1 "1 ok, 1 failed" -- "${suite[@]}"
json_check "$WORK/suite/index.json" 'r["schema"] == "tbd.suite/1" and [x["workload"] for x in r["runs"]] == ["ncf", "resnet50"]'
json_check "$WORK/suite/index.json" '[x["status"] for x in r["runs"]] == ["ok", "failed"]'
json_check "$WORK/suite/index.json" '"bad.jpg: not a JPEG" in r["runs"][1]["error"] and "file" not in r["runs"][1]'
json_check "$WORK/suite/index.json" '"--iters" in r["runs"][0]["options"] and r["runs"][0]["options"].count("--scale") == 1'
json_check "$WORK/suite/ncf.json" 'r["workload"]["name"] == "ncf" and len(r["iterations"]) == 2'
grep -q "bad.jpg" "$WORK/suite/logs/resnet50.log" || fail "the failing run's log lacks its error"
[ "$(grep -c '"key": "run_stop"' "$WORK/suite.mllog")" -eq 1 ] || fail "suite --mllog: expected one completed run"
[ "$(wc -l < "$WORK/suite.csv")" -eq 2 ] || fail "suite --csv: expected a header and one row"

# Resume: ncf is skipped, the failed resnet50 is tried again.
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["started_utc"])' "$WORK/suite/index.json")
"$TBD" "${suite[@]}" > "$WORK/resume.out" 2>&1
grep -q "ncf: skipped: completed earlier" "$WORK/resume.out" || fail "suite re-run did not skip ncf: $(cat "$WORK/resume.out")"
grep -q "resnet50: failed" "$WORK/resume.out" || fail "suite re-run did not retry resnet50"
json_check "$WORK/suite/index.json" 'r["runs"][0]["started_utc"] == "'"$first"'"'
[ "$(wc -l < "$WORK/suite.csv")" -eq 2 ] || fail "a skipped run appended to the CSV"
# --force redoes it.
sleep 1
"$TBD" "${suite[@]}" --force > "$WORK/force.out" 2>&1
grep -q "ncf: ok" "$WORK/force.out" || fail "suite --force did not redo ncf: $(cat "$WORK/force.out")"
[ "$(wc -l < "$WORK/suite.csv")" -eq 3 ] || fail "suite --force: expected a second CSV row"
expect_exit 2 "preset must be quick, paper or gpu" -- suite --preset huge
expect_exit 2 "unknown workload 'nosuch'" -- suite --workloads ncf,nosuch
expect_exit 2 "for takes WORKLOAD:OPTIONS" -- suite --workloads ncf --for nocolon

# --- tbd report of the real results ------------------------------------------
mkdir -p "$WORK/all"
cp -r "$WORK/suite" "$WORK/sweep-auto" "$WORK/all/"
expect_exit 0 "wrote" -- report "$WORK/all" --format md --out "$WORK/all.md"
grep -q "resnet50 tiny b2 fp32" "$WORK/all.md" || fail "the report lacks the sweep's runs"
grep -q "largest batch size that fits: 4" "$WORK/all.md" || fail "the report lacks the sweep's result"
grep -q "| resnet50 | failed |" "$WORK/all.md" || fail "the report lacks the failed suite run"
grep -q "| resnet50 batch 8 | out_of_memory |" "$WORK/all.md" || fail "the report lacks the out-of-memory point"
expect_exit 0 "wrote" -- report "$WORK/all" --format html --out "$WORK/all.html"
grep -q '<canvas id="chart-1"' "$WORK/all.html" || fail "the HTML report has no chart"

finish
