# tbd compare on synthetic result files written here: verdicts and exit
# statuses (regression -> 1, no change or inconclusive -> 0, incomparable ->
# 2), the statistics checked against scipy, environment warnings, an explicit
# A/B, and clear errors for malformed files.
source "$(dirname "$0")/lib.sh"
# The results in sub-folders and future.json are hand-made fixtures; the
# compare documents tbd writes (top-level *.json) are validated.
SCHEMA_EXEMPT="/[^/]+/r[0-9]*\\.json$|/future\\.json$"

# write_result FILE BATCH CPU THREADS SECONDS... : a minimal tbd.result/1
# document with one repetition of BATCH samples per SECONDS value.
write_result() {
  python3 - "$@" <<'PY'
import json, sys
path, batch, cpu, threads, *times = sys.argv[1:]
times = [float(t) for t in times]
reps = [{"samples": int(batch), "seconds": t, "iterations": 1, "samples_per_s": int(batch) / t} for t in times]
json.dump({"schema": "tbd.result/1",
           "workload": {"name": "resnet50", "settings": {"depth": "50"}, "sample_unit": "images",
                        "options": {"scale": "tiny", "batch_size": int(batch), "precision": "fp32", "device": "cpu",
                                    "threads": int(threads), "data": "synthetic", "settings": {}, "seed": 42}},
           "environment": {"cpu": {"model": cpu}, "libtorch": {"version": "2.13.0"}, "os": {"hostname": "h"}},
           "iterations": times, "summary": {"median_s": sorted(times)[len(times) // 2]},
           "throughput": {"samples_per_s": int(batch) * len(times) / sum(times), "unit": "images/s",
                          "repetitions": reps},
           "partial": False}, open(path, "w"))
PY
}

mkdir -p "$WORK/base" "$WORK/same" "$WORK/slow" "$WORK/fast" "$WORK/one" "$WORK/noisy"
base=(0.100 0.102 0.098 0.101 0.099)
write_result "$WORK/base/r.json" 4 "CPU A" 2 "${base[@]}"
write_result "$WORK/same/r.json" 4 "CPU A" 2 0.101 0.099 0.100 0.102 0.098
write_result "$WORK/slow/r.json" 4 "CPU A" 2 0.121 0.119 0.120 0.122 0.118
write_result "$WORK/fast/r.json" 4 "CPU B" 2 0.081 0.079 0.080 0.082 0.078
write_result "$WORK/one/r.json" 4 "CPU A" 2 0.150
write_result "$WORK/noisy/r.json" 4 "CPU A" 2 0.08 0.13 0.10 0.12 0.09

# One file a side: 1.6% noise between repetitions, as much again allowed for
# the processes, cannot exclude a 5% change; three files a side can.
expect_exit 0 "inconclusive" -- compare "$WORK/base" "$WORK/same"
expect_exit 0 "needs about [0-9]+ result files a side" -- compare "$WORK/base" "$WORK/same"
mkdir -p "$WORK/base3same" "$WORK/same3"
for i in 1 2 3; do
  write_result "$WORK/base3same/r$i.json" 4 "CPU A" 2 0.100 0.101 0.099
  write_result "$WORK/same3/r$i.json" 4 "CPU A" 2 0.101 0.100 0.099
done
write_result "$WORK/same3/r3.json" 4 "CPU A" 2 0.099 0.100 0.100
expect_exit 0 "no significant change" -- compare "$WORK/base3same" "$WORK/same3"
expect_exit 1 "slower" -- compare "$WORK/base" "$WORK/slow"
expect_exit 1 "significantly slower" -- compare "$WORK/base/r.json" "$WORK/slow/r.json"
# The README's form: a percentage; a bare 5 would be 500% and is refused.
expect_exit 1 "slower" -- compare "$WORK/base" "$WORK/slow" --threshold 5%
expect_exit 2 "would be 500%.*0.05.*5%" -- compare "$WORK/base" "$WORK/slow" --threshold 5
# A 20% slow-down under a 30% threshold is no regression.
expect_exit 0 "no significant change" -- compare "$WORK/base" "$WORK/slow" --threshold 30%
# Faster is fine, and the other CPU is warned about.
expect_exit 0 "faster" -- compare "$WORK/base" "$WORK/fast"
expect_exit 0 "warning: CPU differs" -- compare "$WORK/base" "$WORK/fast"
# One repetition, or too much noise for five: inconclusive, exit 0, with what it needs.
expect_exit 0 "inconclusive" -- compare "$WORK/base" "$WORK/one"
expect_exit 0 "needs at least 2 a side.*--repeat" -- compare "$WORK/base" "$WORK/one"
expect_exit 0 "inconclusive" -- compare "$WORK/base" "$WORK/noisy"
# Repetitions cannot narrow the process allowance below this noise: it asks for result files.
expect_exit 0 "a verdict needs about [0-9]+ result files a side" -- compare "$WORK/base" "$WORK/noisy"

# --json: the numbers, parsed back and checked against scipy's Welch test.
"$TBD" compare "$WORK/base" "$WORK/slow" --json > "$WORK/cmp.json" 2>/dev/null
[ $? -eq 1 ] || fail "compare --json of a regression should exit 1"
json_check "$WORK/cmp.json" 'r["schema"] == "tbd.compare/2" and r["regression"] is True'
json_check "$WORK/cmp.json" 'r["runs"][0]["unit"] == "repetition" and r["runs"][0]["n_base"] == 5'
json_check "$WORK/cmp.json" 'r["runs"][0]["ratio_ci"][0] < r["runs"][0]["ratio"] < r["runs"][0]["ratio_ci"][1]'
"$TBD" compare "$WORK/base" "$WORK/noisy" --json > "$WORK/noisy.json" 2>/dev/null
python="$(test_venv scipy scipy)" || fail "cannot install scipy from PyPI"
# Three files a side make the process the unit: scipy's Welch test on the
# processes' logs. One file a side: repetitions, each side's variance of
# its mean s²/n widened by s² for the processes it cannot show
# (docs/metrics.md#compare), through scipy's t distribution.
mkdir -p "$WORK/base3" "$WORK/slow3"
for i in 1 2 3; do
  write_result "$WORK/base3/r$i.json" 4 "CPU A" 2 0.10$i 0.10$((i + 2))
  write_result "$WORK/slow3/r$i.json" 4 "CPU A" 2 0.12$((i * 2)) 0.12$i
done
"$TBD" compare "$WORK/base3" "$WORK/slow3" --json > "$WORK/cmp3.json" 2>/dev/null
json_check "$WORK/cmp3.json" 'r["runs"][0]["unit"] == "process" and r["runs"][0]["n_new"] == 3'
"$python" - "$WORK" <<'PY' || fail "compare's statistics disagree with scipy"
import json, math, sys
from scipy import stats
work = sys.argv[1]
def reps(path):
    r = json.load(open(path))
    return [math.log(x["seconds"] / x["samples"]) for x in r["throughput"]["repetitions"]]
def check(run, t, lo, hi):
    assert abs(run["p_value"] - t.pvalue) < 1e-9 * max(1, t.pvalue), (run["p_value"], t.pvalue)
    assert abs(run["df"] - t.df) < 1e-9, (run["df"], t.df)
    assert abs(run["ratio_ci"][0] - math.exp(lo)) < 1e-9 and abs(run["ratio_ci"][1] - math.exp(hi)) < 1e-9
    print("p", run["p_value"], "scipy", t.pvalue)
proc = lambda side: [sum(reps(f"{work}/{side}/r{i}.json")) / 2 for i in (1, 2, 3)]
t = stats.ttest_ind(proc("slow3"), proc("base3"), equal_var=False)
ci = t.confidence_interval(0.95)
check(json.load(open(f"{work}/cmp3.json"))["runs"][0], t, ci.low, ci.high)
for new, doc in (("slow", "cmp.json"), ("noisy", "noisy.json")):
    run = json.load(open(f"{work}/{doc}"))["runs"][0]
    b, n = reps(f"{work}/base/r.json"), reps(f"{work}/{new}/r.json")
    vb = stats.tvar(b) * (1 / len(b) + 1)
    vn = stats.tvar(n) * (1 / len(n) + 1)
    se = math.sqrt(vb + vn)
    df = (vb + vn) ** 2 / (vb ** 2 / (len(b) - 1) + vn ** 2 / (len(n) - 1))
    d = sum(n) / len(n) - sum(b) / len(b)
    half = stats.t.ppf(0.975, df) * se
    class T: pass
    t = T(); t.pvalue = 2 * stats.t.sf(abs(d / se), df); t.df = df
    assert run["process_allowance"] is True
    check(run, t, d - half, d + half)
PY

# Nothing comparable (another batch size) is bad usage, exit 2, and suggests --ab.
mkdir -p "$WORK/other" "$WORK/threads1"
write_result "$WORK/other/r.json" 8 "CPU A" 2 "${base[@]}"
expect_exit 2 "nothing comparable.*--ab" -- compare "$WORK/base" "$WORK/other"
expect_exit 2 "new: +resnet50 tiny b8 fp32" -- compare "$WORK/base" "$WORK/other"
# An explicit A/B of two configurations.
write_result "$WORK/threads1/r.json" 4 "CPU A" 1 0.181 0.179 0.180 0.182 0.178
expect_exit 1 "A/B: threads 2 → 1" -- compare "$WORK/base" "$WORK/threads1" --ab
expect_exit 0 "A/B: batch_size 4 → 8" -- compare "$WORK/base" "$WORK/other" --ab

# Bad inputs: the file is named, exit 2 (1 is kept for regressions).
echo '{"schema": "tbd.result/1", "workload": {' > "$WORK/truncated.json"
expect_exit 2 "truncated.json: not valid JSON" -- compare "$WORK/base" "$WORK/truncated.json"
echo '{"schema": "tbd.result/9"}' > "$WORK/future.json"
expect_exit 2 "future.json: unknown schema 'tbd.result/9'" -- compare "$WORK/future.json" "$WORK/base"
echo '{"traceEvents": []}' > "$WORK/trace.json"
expect_exit 2 "trace.json: not a tbd file" -- compare "$WORK/base" "$WORK/trace.json"
mkdir -p "$WORK/empty"
expect_exit 2 "empty: no tbd results found" -- compare "$WORK/base" "$WORK/empty"
expect_exit 2 "nosuch: no such file or folder" -- compare "$WORK/base" "$WORK/nosuch"
expect_exit 2 "threshold" -- compare "$WORK/base" "$WORK/same" --threshold 200%
expect_exit 2 "finite" -- compare "$WORK/base" "$WORK/same" --threshold inf
expect_exit 2 "alpha must lie in" -- compare "$WORK/base" "$WORK/same" --alpha 0

finish
