# tbd compare on synthetic result files written here: verdicts and exit
# statuses (regression -> 1, no change -> 0), environment warnings, and clear
# errors for malformed files, unknown schemas and folders with nothing comparable.
source "$(dirname "$0")/lib.sh"

# write_result FILE BATCH CPU TIME... : a minimal tbd.result/1 document.
write_result() {
  python3 - "$@" <<'PY'
import json, sys
path, batch, cpu, *times = sys.argv[1:]
times = [float(t) for t in times]
json.dump({"schema": "tbd.result/1",
           "workload": {"name": "resnet50", "settings": {"depth": "50"},
                        "options": {"scale": "tiny", "batch_size": int(batch), "precision": "fp32", "device": "cpu",
                                    "threads": 2, "data": "synthetic", "settings": {}, "seed": 42}},
           "environment": {"cpu": {"model": cpu}, "libtorch": {"version": "2.13.0"}, "os": {"hostname": "h"}},
           "iterations": times, "summary": {"median_s": sorted(times)[len(times) // 2]},
           "throughput": {"samples_per_s": int(batch) / (sum(times) / len(times)), "unit": "images/s"},
           "partial": False}, open(path, "w"))
PY
}

mkdir -p "$WORK/base" "$WORK/same" "$WORK/slow" "$WORK/fast"
base=(0.100 0.102 0.098 0.101 0.099 0.103 0.100 0.097 0.101 0.099)
write_result "$WORK/base/r.json" 4 "CPU A" "${base[@]}"
write_result "$WORK/same/r.json" 4 "CPU A" 0.101 0.099 0.100 0.102 0.098 0.100 0.103 0.097 0.100 0.101
write_result "$WORK/slow/r.json" 4 "CPU A" 0.121 0.119 0.120 0.122 0.118 0.120 0.123 0.117 0.120 0.121
write_result "$WORK/fast/r.json" 4 "CPU B" 0.081 0.079 0.080 0.082 0.078 0.080 0.083 0.077 0.080 0.081

expect_exit 0 "no significant change" -- compare "$WORK/base" "$WORK/same"
expect_exit 1 "slower" -- compare "$WORK/base" "$WORK/slow"
expect_exit 1 "significantly slower" -- compare "$WORK/base/r.json" "$WORK/slow/r.json"
# A 20% slow-down under a 25% threshold is no regression.
expect_exit 0 "no significant change" -- compare "$WORK/base" "$WORK/slow" --threshold 0.25
# Faster is fine, and the other CPU is warned about.
expect_exit 0 "faster" -- compare "$WORK/base" "$WORK/fast"
expect_exit 0 "warning: CPU differs" -- compare "$WORK/base" "$WORK/fast"

# --json: the numbers, parsed back.
"$TBD" compare "$WORK/base" "$WORK/slow" --json > "$WORK/cmp.json" 2>/dev/null
[ $? -eq 1 ] || fail "compare --json of a regression should exit 1"
json_check "$WORK/cmp.json" 'r["schema"] == "tbd.compare/1" and r["regression"] is True'
json_check "$WORK/cmp.json" 'abs(r["runs"][0]["ratio"] - 1.2) < 1e-9 and r["runs"][0]["p_value"] < 0.001'
json_check "$WORK/cmp.json" 'r["runs"][0]["ratio_ci"][0] < 1.2 < r["runs"][0]["ratio_ci"][1]'
json_check "$WORK/cmp.json" 'r["runs"][0]["probability_new_slower"] == 1.0 and r["runs"][0]["verdict"] == "slower"'

# Nothing comparable: another batch size.
mkdir -p "$WORK/other"
write_result "$WORK/other/r.json" 8 "CPU A" "${base[@]}"
expect_exit 1 "nothing comparable" -- compare "$WORK/base" "$WORK/other"
expect_exit 1 "new: +resnet50 tiny b8 fp32" -- compare "$WORK/base" "$WORK/other"

# Bad inputs: the file is named.
echo '{"schema": "tbd.result/1", "workload": {' > "$WORK/truncated.json"
expect_exit 1 "truncated.json: not valid JSON" -- compare "$WORK/base" "$WORK/truncated.json"
echo '{"schema": "tbd.result/9"}' > "$WORK/future.json"
expect_exit 1 "future.json: unknown schema 'tbd.result/9'" -- compare "$WORK/future.json" "$WORK/base"
echo '{"traceEvents": []}' > "$WORK/trace.json"
expect_exit 1 "trace.json: not a tbd file" -- compare "$WORK/base" "$WORK/trace.json"
mkdir -p "$WORK/empty"
expect_exit 1 "empty: no tbd results found" -- compare "$WORK/base" "$WORK/empty"
expect_exit 2 "nosuch: no such file or folder" -- compare "$WORK/base" "$WORK/nosuch"
expect_exit 2 "threshold must lie in" -- compare "$WORK/base" "$WORK/same" --threshold 2
expect_exit 2 "alpha must lie in" -- compare "$WORK/base" "$WORK/same" --alpha 0

finish
