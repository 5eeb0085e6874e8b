#!/usr/bin/env bash
# Sharded data parallelism on this machine (issue 33's memory, speed and
# prediction table): for each workload, one single-process base run and
# `tbd run --nproc 2` with each --sharding strategy, ZeRO-3 included (one
# thread per rank); then per strategy the global throughput, rank 0's model
# state (measured from its tensors, beside ZeRO's formula), the memory
# probe's peak next to `tbd predict BASE --nproc 2 --sharding S`'s, and the
# comm probe's exposed wait.
#
#   bench/sharding.sh [build/tbd] [workloads] [SCALE=small] [KEEP=DIR keeps the results]
set -euo pipefail
tbd="${1:-build/tbd}"
workloads="${2:-gpt resnet50 transformer llama}"
scale="${SCALE:-small}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
common=(--scale "$scale" --threads 1 --warmup 1 --iters 2 --repeat 3 --quiet)
for w in $workloads; do
  "$tbd" run "$w" "${common[@]}" --out "$work/$w-base.json"
  for s in none optimizer gradients full; do
    "$tbd" run "$w" "${common[@]}" --nproc 2 --sharding "$s" --probes time,memory,comm --out "$work/$w-$s.json"
    "$tbd" predict "$work/$w-base.json" --nproc 2 --sharding "$s" --out "$work/$w-$s-predicted.json" --dir "$work/predict" \
      > /dev/null
  done
done
python3 - "$work" $workloads <<'PY'
import json, sys
work, names = sys.argv[1], sys.argv[2:]
mib = lambda b: b / 2**20
print(f"{'workload':12} {'sharding':10} {'global/s':>10} {'state MiB':>10} {'formula':>8} {'peak MiB':>9} "
      f"{'predicted':>9} {'error':>7} {'exposed ms':>10}  (peak: weights / grads / optim at the peak)")
for w in names:
    for s in ("none", "optimizer", "gradients", "full"):
        r = json.load(open(f"{work}/{w}-{s}.json"))
        d, m, c = r["distributed"], r["memory"], r.get("comm", {})
        b = m["breakdown"]
        sh = d["sharding"]
        if "model_state_bytes_per_rank" in sh:
            state = sh["model_state_bytes_per_rank"]["total"]
            f = sh["formula_bytes_per_rank"]
            formula = f["weights"] + f["gradients"] + f["optimizer_state"]
        else:  # replicated: weights and optimizer state from the memory probe, gradients 4 bytes per element
            g = json.load(open(f"{work}/{w}-base.json"))["gradients"]
            state = formula = b["weights"] + b["optimizer_state"] + sum(
                e * z for e, z in zip(g["elements"], g["element_size"]))
        pred = [p for p in json.load(open(f"{work}/{w}-{s}-predicted.json"))["predictions"]
                if p["kind"] == "sharded_memory"][0]
        peak, predicted = m["peak_bytes"], pred["peak_bytes_per_rank"]
        print(f"{w:12} {s:10} {d['global_samples_per_s']:10.4g} {mib(state):10.2f} {mib(formula):8.2f} "
              f"{mib(peak):9.2f} {mib(predicted):9.2f} {100 * (predicted / peak - 1):+6.1f}% "
              f"{1e3 * c.get('exposed_wait_s_mean', float('nan')):10.1f}  "
              f"({mib(b['weights']):.2f} / {mib(b['weight_gradients']):.2f} / {mib(b['optimizer_state']):.2f})"
              + (f"  gathered at most {mib(sh['units']['peak_gathered_bytes']):.2f} of {sh['units']['count']} units"
                 if "units" in sh else ""))
PY
echo "files in $work"
