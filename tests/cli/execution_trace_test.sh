# Execution traces (issue 16, part 2): `--execution-trace` writes PyTorch's
# execution trace through LibTorch's ExecutionTraceObserver, linked to the
# Kineto trace, one per rank in data-parallel runs. Cross-checked against
# Python: the project's torch wheel records the same resnet50 step
# (bench/peer/resnet50.py, tbd's small scale) with
# torch.profiler.ExecutionTraceObserver, and the operators match tbd's.
source "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python="${TBD_TORCH_PYTHON:-$repo/.venv/bin/python}"
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "SKIP: no Python with torch at $python (scripts/setup makes .venv); set TBD_TORCH_PYTHON" >&2
  exit 77
fi

"$TBD" run resnet50 --scale small --batch-size 2 --threads 1 --iters 1 --warmup 1 --repeat 1 --probes time \
  --trace-iters 1 --trace "$WORK/kineto.json" --execution-trace "$WORK/tbd-et.json" --out "$WORK/r.json" --quiet ||
  fail "the run with --execution-trace exited $?"
json_check "$WORK/r.json" 'r["execution_trace"]["file"].endswith("tbd-et.json") and r["execution_trace"]["bytes"] > 0'

"$python" - "$repo/bench/peer" "$WORK/py-et.json" <<'PY' 2>/dev/null || fail "Python's ExecutionTraceObserver run failed"
import argparse, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import torch
import resnet50
from torch.profiler import ExecutionTraceObserver
torch.set_num_threads(1)
torch.manual_seed(42)
peer = resnet50.build(argparse.Namespace(batch_size=2, seed=42, memory_format="channels_last"))
peer.step(peer.batches[0]).item()  # warm-up, as tbd's --warmup 1
et = ExecutionTraceObserver()
et.register_callback(sys.argv[2])
et.start()
peer.step(peer.batches[1]).item()
et.stop()
et.unregister_callback()
PY

python3 - "$WORK" <<'PY' || fail "tbd's execution trace does not match Python's"
import json, sys
work = sys.argv[1]

def load(name):
    e = json.load(open(f"{work}/{name}"))
    assert e["schema"].startswith("1.") and "chakra" in e["schema"], e["schema"]
    return e

def top_level(e):
    """Names of the operators called by the step itself (not by other operators), in order."""
    nodes = {n["id"]: n for n in e["nodes"]}
    # Profiler steps, tbd's phases and the models' layer scopes (nn.Module: NAME) hold operators.
    container = lambda n: n["name"].startswith(("[pytorch|profiler", "ProfilerStep#", "tbd::", "nn.Module: "))
    out = []
    for n in sorted(e["nodes"], key=lambda n: n["id"]):
        parent = nodes.get(n["ctrl_deps"])
        if parent is not None and container(parent) and not container(n):
            out.append(n["name"])
    return out

tbd, py = load("tbd-et.json"), load("py-et.json")
t, p = top_level(tbd), top_level(py)
# Forward: up to the first autograd node. tbd converts the batch to
# channels-last inside the step (one aten::contiguous); Python's batches
# were converted before timing.
def forward(seq):
    end = next(i for i, n in enumerate(seq) if n.startswith("autograd::"))
    return seq[:end]
tf = [n for n in forward(t) if n != "aten::contiguous"]
pf = forward(p)
assert tf == pf, f"forward differs:\ntbd {tf[:20]}...\npy  {pf[:20]}..."
# Backward: the autograd engine's functions, in the order it ran them.
tb = [n for n in t if n.startswith("autograd::engine::evaluate_function")]
pb = [n for n in p if n.startswith("autograd::engine::evaluate_function")]
assert tb == pb, f"backward differs: {len(tb)} against {len(pb)} functions"
# The optimizer step is the same fused kernel.
assert "aten::_fused_sgd_" in [n["name"] for n in tbd["nodes"]] and "aten::_fused_sgd_" in [n["name"] for n in py["nodes"]]
# Linked to the Kineto trace: the record-function ids of the execution
# trace's operators are the Kineto trace's "Record function id"s.
kineto = json.load(open(f"{work}/kineto.json"))
kineto_ids = {ev["args"]["Record function id"] for ev in kineto["traceEvents"]
              if isinstance(ev.get("args"), dict) and "Record function id" in ev["args"]}
et_ids = {a["value"] for n in tbd["nodes"] for a in n.get("attrs", []) if a["name"] == "rf_id"}
linked = len(et_ids & kineto_ids) / max(1, len(et_ids))
assert linked > 0.9, f"only {linked:.0%} of the execution trace's rf_ids are in the Kineto trace"
print(f"forward {len(tf)} ops and backward {len(tb)} functions as Python's; {linked:.0%} of rf_ids linked to Kineto")
PY

# A bad path is refused before the run, naming the option it came from.
expect_exit 2 '^tbd: error: --execution-trace .*missing/et.json: directory .* does not exist' -- \
  run ncf --scale tiny --execution-trace "$WORK/missing/et.json"

# Data-parallel: one execution trace per rank in the folder.
"$TBD" run ncf --scale tiny --iters 1 --warmup 1 --repeat 2 --probes time --nproc 2 --threads 1 --trace-iters 1 \
  --execution-trace "$WORK/et-ranks" --quiet || fail "the 2-rank run with --execution-trace exited $?"
for r in 0 1; do
  json_check "$WORK/et-ranks/rank-$r.json" 'len(r["nodes"]) > 100'
done

finish
