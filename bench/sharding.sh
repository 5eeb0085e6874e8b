#!/usr/bin/env bash
# Sharded data parallelism on this machine (issue 33's memory and speed
# table): for each workload, `tbd run --nproc 2` with each --sharding
# strategy, ZeRO-3 included (one thread per rank), then per strategy the global throughput,
# rank 0's model state (measured from its tensors, beside ZeRO's formula)
# and the memory probe's peak with its weights, gradients and optimizer
# state at the peak.
#
#   bench/sharding.sh [build/tbd] [workloads] [SCALE=small] [KEEP=DIR keeps the results]
set -euo pipefail
tbd="${1:-build/tbd}"
workloads="${2:-gpt resnet50 transformer llama}"
scale="${SCALE:-small}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
for w in $workloads; do
  for s in none optimizer gradients full; do
    "$tbd" run "$w" --scale "$scale" --threads 1 --nproc 2 --sharding "$s" --warmup 1 --iters 2 --repeat 3 \
      --probes time,memory --out "$work/$w-$s.json" --quiet
  done
done
python3 - "$work" $workloads <<'PY'
import json, sys
work, names = sys.argv[1], sys.argv[2:]
mib = lambda b: b / 2**20
print(f"{'workload':12} {'sharding':10} {'global/s':>10} {'state MiB':>10} {'formula':>8} {'optim MiB':>10} "
      f"{'grads MiB':>10} {'peak MiB':>9}  (peak: weights / grads / optim at the peak)")
for w in names:
    for s in ("none", "optimizer", "gradients", "full"):
        r = json.load(open(f"{work}/{w}-{s}.json"))
        d = r["distributed"]
        m = r["memory"]
        b = m["breakdown"]
        sh = d["sharding"]
        if "model_state_bytes_per_rank" in sh:
            held = sh["model_state_bytes_per_rank"]
            f = sh["formula_bytes_per_rank"]
            state, formula = held["total"], f["weights"] + f["gradients"] + f["optimizer_state"]
            optim, grads = held["optimizer_state"], held["gradients"]
        else:  # replicated: weights, gradients and optimizer state from the memory probe's peak
            state = formula = b["weights"] + b["weight_gradients"] + b["optimizer_state"]
            optim, grads = b["optimizer_state"], b["weight_gradients"]
        print(f"{w:12} {s:10} {d['global_samples_per_s']:10.4g} {mib(state):10.2f} {mib(formula):8.2f} "
              f"{mib(optim):10.2f} {mib(grads):10.2f} {mib(m['peak_bytes']):9.2f}  "
              f"({mib(b['weights']):.2f} / {mib(b['weight_gradients']):.2f} / {mib(b['optimizer_state']):.2f})"
              + (f"  gathered at most {mib(sh['units']['peak_gathered_bytes']):.2f} of {sh['units']['count']} units"
                 if "units" in sh else ""))
PY
echo "files in $work"
