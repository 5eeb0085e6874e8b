# Traces Holistic Trace Analysis reads (issue 16, part 1): every profiled
# iteration in a ProfilerStep#N range, distributedInfo with rank and world
# size, the trace named after its file, and one trace per rank in a folder
# for data-parallel runs. Checked with HTA itself, from PyPI, in the test venv.
source "$(dirname "$0")/lib.sh"

python="$(test_venv hta holistictraceanalysis)" || { echo "FAIL: cannot install holistictraceanalysis" >&2; exit 1; }

quick=(--scale tiny --iters 2 --warmup 1 --repeat 2 --probes time --trace-iters 3 --quiet)
# Two ranks, one thread each: --trace names a folder of rank-R.json files.
"$TBD" run ncf "${quick[@]}" --nproc 2 --threads 1 --trace "$WORK/ranks" --out "$WORK/dp.json" ||
  fail "the 2-rank traced run exited $?"
json_check "$WORK/dp.json" 'r["trace"]["per_rank_folder"].endswith("ranks") and r["trace"]["file"].endswith("rank-0.json")'
# One process: --trace names the file.
"$TBD" run ncf "${quick[@]}" --trace "$WORK/one.json" || fail "the traced run exited $?"
touch "$WORK/a-file.json"
expect_exit 2 'a data-parallel run writes one trace per rank into a folder' -- \
  run ncf --scale tiny --nproc 2 --threads 1 --trace "$WORK/a-file.json"

"$python" - "$WORK" <<'PY' || fail "HTA did not read tbd's traces as expected"
import json, logging, sys, warnings
warnings.simplefilter("ignore")  # pandas deprecations inside HTA
work = sys.argv[1]
complaints = []
class Catch(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        if record.levelno >= logging.WARNING and ("distributedInfo" in text or "ProfilerStep" in text
                                                  or "same rank" in text or "only one iteration" in text):
            complaints.append(text)
logging.getLogger().addHandler(Catch())
logging.getLogger("hta").addHandler(Catch())
from hta.trace_analysis import TraceAnalysis

# HTA drops the last ProfilerStep by default (torch.profiler's last step is
# usually cut short); tbd's three are whole, so keep it.
ta = TraceAnalysis(trace_dir=f"{work}/ranks", include_last_profiler_step=True)
ranks = sorted(ta.t.traces.keys())
assert ranks == [0, 1], f"ranks {ranks}"
for rank, df in ta.t.traces.items():
    iterations = sorted(int(i) for i in df["iteration"].unique() if i >= 0)
    assert iterations == [0, 1, 2], f"rank {rank}: iterations {iterations}"
    trace = json.load(open(f"{work}/ranks/rank-{rank}.json"))
    info = trace["distributedInfo"]
    assert info["rank"] == rank and info["world_size"] == 2 and info["backend"] == "gloo", info
    assert trace["traceName"] == f"{work}/ranks/rank-{rank}.json", trace["traceName"]
one = json.load(open(f"{work}/one.json"))
assert one["traceName"] == f"{work}/one.json", one["traceName"]
assert one["distributedInfo"]["rank"] == 0 and one["distributedInfo"]["world_size"] == 1, one["distributedInfo"]
steps = sorted(e["name"] for e in one["traceEvents"] if e.get("name", "").startswith("ProfilerStep"))
assert steps == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], steps
assert not complaints, complaints
print("HTA: ranks", ranks, "iterations 0-2 on each; no warnings about ranks or steps")
PY

finish
