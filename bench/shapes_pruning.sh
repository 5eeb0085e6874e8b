#!/usr/bin/env bash
# The pruning check of tbd shapes (docs/analysis.md#tbd-shapes): sweeps one
# resnet50 layer, takes its worst cliff (count c slower than a larger count
# c' beyond both intervals) and the performance-aware count nearest below
# c, then trains the whole model with that layer at c, at that count and at
# c' (and its published width), alternated ROUNDS times (default 2) so a
# drift of the machine hits all alike. Prints per width the layer's time in
# the model (the layers probe: its forward operator and autograd nodes, over
# 3 instrumented iterations), the time of the convolution that reads its
# output (its input channels change too) and the step time, per round, and
# whether the model's order matches the sweep's. One layer's change is a
# small share of the step: the step time shows it only when it is larger
# than the step's run-to-run noise.
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
"$tbd" shapes resnet50 "${args[@]}" --layers "^${layer//./\\.}\$" --repeat 6 --iters 3 \
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
widths=("$cliff" "$aware" "$faster")
[ "$original" != "$faster" ] && widths+=("$original")
for round in $(seq 1 "$rounds"); do
  for w in "${widths[@]}"; do
    "$tbd" run resnet50 "${args[@]}" --set "widths=$layer:$w" --warmup 3 --iters 4 --repeat 3 --probes time,layers \
      --instrument-iters 3 --quiet \
      --out "$work/run-$w-$round.json"
  done
done
python3 - "$work" "$rounds" "$layer" "${widths[@]}" <<'PY'
import json, sys
work, rounds, layer, widths = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
sweep = json.load(open(f"{work}/shapes.json"))["layers"][0]
alone = {p["channels"]: 1e3 * p["training"]["mean_s"] for p in sweep["curve"]}
# The convolution that reads the layer's output: conv2 after conv1, conv3 after conv2.
reader = layer[:-1] + str(int(layer[-1]) + 1)
def in_model_ms(r, module):
    return sum(1e3 * (l["forward_s"] + l["backward_s"]) for l in r["layers"]["layers"] if l["module"] == module)
rows = {}
for w in widths:
    runs = [json.load(open(f"{work}/run-{w}-{k}.json")) for k in range(1, rounds + 1)]
    rows[w] = [(in_model_ms(r, layer), in_model_ms(r, reader), 1e3 * r["summary"]["mean_s"]) for r in runs]
    print(f"{layer} at {w:>5}: alone {alone.get(int(w), float('nan')):7.3f} ms | in the model (rounds): "
          f"{' / '.join(f'{a:.2f}' for a, _, _ in rows[w])} ms, {reader} {' / '.join(f'{b:.2f}' for _, b, _ in rows[w])} ms"
          f" | step {' / '.join(f'{c:.1f}' for _, _, c in rows[w])} ms")
cliff, aware = widths[0], widths[1]
for k in range(rounds):
    layer_d = rows[cliff][k][0] - rows[aware][k][0]
    both_d = layer_d + rows[cliff][k][1] - rows[aware][k][1]
    step_d = rows[cliff][k][2] - rows[aware][k][2]
    order = lambda d: "the sweep's order" if d > 0 else "NOT the sweep's order"
    print(f"round {k + 1}: cliff {cliff} minus aware {aware}: layer {layer_d:+.2f} ms ({order(layer_d)}), "
          f"layer + reader {both_d:+.2f} ms ({order(both_d)}), step {step_d:+.1f} ms ({order(step_d)})")
PY
