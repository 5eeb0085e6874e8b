#!/usr/bin/env bash
# The pruning check of tbd shapes (docs/analysis.md#shapes): sweeps one
# resnet50 layer, takes its worst cliff (count c slower than a larger count
# c' beyond both intervals) and the performance-aware count nearest below
# c, then trains the whole model with that layer at c, at that count, at c'
# and at its published width, alternated ROUNDS times (default 2) so a
# drift of the machine hits all alike. Prints each width's throughput per
# round and whether the model's order matches the sweep's.
#
#   bench/shapes_pruning.sh [build/tbd] [LAYER=layer3.0.conv2] [ROUNDS=2] [KEEP=DIR] [ARGS="--scale small ..."]
set -euo pipefail
tbd="${1:-build/tbd}"
layer="${2:-layer3.0.conv2}"
rounds="${ROUNDS:-2}"
work="${KEEP:-$(mktemp -d)}"
# shellcheck disable=SC2206
args=(${ARGS:---scale small --batch-size 8 --threads 2})
mkdir -p "$work"
"$tbd" shapes resnet50 "${args[@]}" --layers "^${layer//./\\.}\$" --channels 50%:100%:4 --repeat 6 --iters 3 \
  --out "$work/shapes.json" >"$work/shapes.txt"
cat "$work/shapes.txt"
read -r cliff faster aware original < <(python3 - "$work/shapes.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["layers"][0]
if not l["cliffs"]:
    print("0 0 0", l["original_channels"]); sys.exit()
c = max(l["cliffs"], key=lambda c: c["ratio"])
aware = max((f for f in l["front"] if f < c["channels"]), default=c["faster_channels"])
print(c["channels"], c["faster_channels"], aware, l["original_channels"])
PY
)
if [ "$cliff" = 0 ]; then
  echo "no cliff in $layer's sweep: nothing to check (try another LAYER or --channels)"
  exit 0
fi
echo "cliff $cliff (beaten by $faster), performance-aware below it $aware, published $original"
widths=("$cliff" "$aware" "$faster" "$original")
for round in $(seq 1 "$rounds"); do
  for w in "${widths[@]}"; do
    "$tbd" run resnet50 "${args[@]}" --set "widths=$layer:$w" --warmup 3 --iters 4 --repeat 3 --probes time --quiet \
      --out "$work/run-$w-$round.json"
  done
done
python3 - "$work" "$rounds" "$layer" "${widths[@]}" <<'PY'
import json, statistics, sys
work, rounds, layer, widths = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
sweep = json.load(open(f"{work}/shapes.json"))["layers"][0]
layer_ms = {p["channels"]: 1e3 * p["training"]["mean_s"] for p in sweep["curve"]}
step = {}
for w in widths:
    times = [json.load(open(f"{work}/run-{w}-{k}.json"))["summary"]["mean_s"] for k in range(1, rounds + 1)]
    step[w] = times
    print(f"{layer} at {w:>5} channels: layer alone {layer_ms.get(int(w), float('nan')):.3f} ms, "
          f"model step {' / '.join(f'{1e3 * t:.1f}' for t in times)} ms (rounds)")
cliff, aware = widths[0], widths[1]
for k in range(rounds):
    d = step[cliff][k] - step[aware][k]
    print(f"round {k + 1}: step at the cliff count {cliff} minus at {aware}: {1e3 * d:+.1f} ms "
          f"({'the order the sweep predicted' if d > 0 else 'NOT the order the sweep predicted'})")
PY
