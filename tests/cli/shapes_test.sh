# tbd shapes: each convolution and linear layer of resnet50 (tiny) swept over
# output-channel counts at the input shape it has in the model. The shapes
# are checked against the architecture (ResNet-50 v1.5 at tiny scale: width
# 8, one bottleneck per stage, 32-pixel images), the analysis against its
# own rules, and bad input is refused with the reason.
source "$(dirname "$0")/lib.sh"

common=(--scale tiny --batch-size 4 --threads 1 --repeat 2 --iters 1 --warmup 1)
"$TBD" shapes resnet50 "${common[@]}" --channels 4,6,8 --out "$WORK/shapes.json" >"$WORK/table.txt" 2>"$WORK/err.txt" ||
  fail "tbd shapes resnet50 failed: $(cat "$WORK/err.txt")"
grep -q "pruned to 75% of each layer's channels (Amdahl estimate)" "$WORK/table.txt" ||
  fail "no estimate line in the table: $(cat "$WORK/table.txt")"
python3 - "$WORK/shapes.json" <<'PY' || fail "the shapes document does not match the architecture or its rules"
import json, sys
d = json.load(open(sys.argv[1]))
by_module = {}
for l in d["layers"]:
    for m in l["modules"]:
        by_module[m] = l
# ResNet-50 at tiny scale: the stem, three convolutions per bottleneck (one
# per stage), a downsample per stage, the classifier: 1 + 4*3 + 4 + 1 = 18.
assert len(by_module) == 18, sorted(by_module)
def geometry(m): return by_module[m]["geometry"]
# 32-pixel images; the stem (stride 2) and max pool (stride 2) leave 8x8.
assert geometry("conv1")["input"] == [4, 3, 32, 32], geometry("conv1")
assert geometry("conv1")["weight"] == [8, 3, 7, 7] and geometry("conv1")["stride"] == [2, 2]
assert geometry("conv1")["input_requires_grad"] is False
assert geometry("layer1.0.conv1")["input"] == [4, 8, 8, 8]
assert geometry("layer1.0.conv1")["input_requires_grad"] is True
# v1.5: stage 2's stride sits in its 3x3 convolution, which reads 16 channels at 8x8.
assert geometry("layer2.0.conv2")["input"] == [4, 16, 8, 8] and geometry("layer2.0.conv2")["stride"] == [2, 2]
assert geometry("layer4.0.conv3")["input"] == [4, 64, 1, 1] and geometry("layer4.0.conv3")["weight"][0] == 256
assert geometry("fc")["kind"] == "linear" and geometry("fc")["input"] == [4, 256] and geometry("fc")["weight"] == [10, 256]
assert sum(l["calls_per_iteration"] for l in d["layers"]) == 18
for l in d["layers"]:
    counts = [p["channels"] for p in l["curve"]]
    original = l["original_channels"]
    assert counts == sorted(set([4, 6, 8, original])), (l["modules"], counts)
    means = {p["channels"]: p["training"]["mean_s"] for p in l["curve"]}
    # The front: each count's mean below every larger count's; the largest always on it.
    assert l["front"][-1] == counts[-1]
    for c in l["front"]:
        assert all(means[c] < means[b] for b in counts if b > c), (l["modules"], c, means)
    # A cliff: slower than a larger count beyond both intervals.
    ci = {p["channels"]: p["training"]["ci95_mean_s"] for p in l["curve"]}
    for c in l["cliffs"]:
        assert ci[c["channels"]][0] > ci[c["faster_channels"]][1] and c["faster_channels"] > c["channels"]
        assert abs(c["ratio"] - means[c["channels"]] / means[c["faster_channels"]]) < 1e-9
    assert l["share_of_step"] > 0
p = d["prediction"]
# The performance-aware choice is never slower than the naive one, nor than the original.
assert p["aware_step_s"] <= p["naive_step_s"] + 1e-12 and p["aware_step_s"] <= p["step_s"] + 1e-12, p
PY

# tbd report reads the document: a table row and a chart per layer shape.
expect_exit 0 "wrote" -- report "$WORK/shapes.json" --format md --out "$WORK/shapes.md"
grep -qE '^\| layer2\.0\.conv2 \| \[4, 16, 8, 8\] conv2d 3x3 stride 2x2 \| 16 \|' "$WORK/shapes.md" ||
  fail "the report lacks layer2.0.conv2's row: $(grep -A4 '## Layer shapes' "$WORK/shapes.md")"
expect_exit 0 "wrote" -- report "$WORK/shapes.json" --format html --out "$WORK/shapes.html"
[ "$(grep -o '<canvas id="chart-' "$WORK/shapes.html" | wc -l)" -eq 17 ] || fail "shapes.html lacks a chart per layer shape"

# bf16: the layers compute in bfloat16 under autocast, and are timed so.
"$TBD" shapes resnet50 "${common[@]}" --precision bf16 --layers '^layer4\.0\.conv2$' --channels 56,64 --json \
  >"$WORK/bf16.json" 2>"$WORK/bf16.err" || fail "tbd shapes --precision bf16 failed: $(cat "$WORK/bf16.err")"
json_check "$WORK/bf16.json" 'len(r["layers"]) == 1 and r["layers"][0]["modules"] == ["layer4.0.conv2"] and r["layers"][0]["geometry"]["dtype"] == "bfloat16"'

# The layers probe in an ordinary run: the same geometry in the result.
"$TBD" run resnet50 --scale tiny --batch-size 4 --threads 1 --repeat 1 --iters 1 --warmup 1 --probes layers --quiet \
  --out "$WORK/run.json" || fail "tbd run --probes layers failed"
json_check "$WORK/run.json" 'len(r["layers"]["layers"]) == 18 and [l for l in r["layers"]["layers"] if l["module"] == "conv1"][0]["geometry"]["input"] == [4, 3, 32, 32]'

# The pruning check's model: --set widths prunes a bottleneck's conv1/conv2
# (batch norm and the next convolution follow). The parameter count falls by
# the formula, from the published geometry the sweep recorded:
# in x (p - w) x k1^2 (conv1) + 2 (p - w) (bn1) + (p - w) x out2 x k2^2 (conv2).
"$TBD" run resnet50 --scale tiny --batch-size 4 --threads 1 --repeat 1 --iters 1 --warmup 1 --probes layers --quiet \
  --set widths=layer2.0.conv1:12 --out "$WORK/pruned.json" || fail "tbd run --set widths failed"
python3 - "$WORK/shapes.json" "$WORK/run.json" "$WORK/pruned.json" <<'PY' || fail "the pruned model's parameter count or shapes are not the formula's"
import json, sys
shapes, run, pruned = (json.load(open(p)) for p in sys.argv[1:])
g = {m: l["geometry"] for l in shapes["layers"] for m in l["modules"]}
c1, c2 = g["layer2.0.conv1"]["weight"], g["layer2.0.conv2"]["weight"]
p, w = c1[0], 12
removed = c1[1] * (p - w) * c1[2] * c1[3] + 2 * (p - w) + (p - w) * c2[0] * c2[2] * c2[3]
assert run["model"]["parameters"] - pruned["model"]["parameters"] == removed, (run["model"]["parameters"], pruned["model"]["parameters"], removed)
layers = {l["module"]: l["geometry"] for l in pruned["layers"]["layers"]}
assert layers["layer2.0.conv1"]["weight"][0] == 12 and layers["layer2.0.conv2"]["input"][1] == 12, layers["layer2.0.conv2"]
PY
expect_exit 2 "--set widths: 'layer2.0.conv3' is not a convolution whose width can change alone" -- \
  run resnet50 --scale tiny --set widths=layer2.0.conv3:8
expect_exit 2 "is not NAME:COUNT" -- run resnet50 --scale tiny --set widths=layer2.0.conv1:0
expect_exit 2 "is not NAME:COUNT" -- run resnet50 --scale tiny --set widths=layer2.0.conv1
expect_exit 2 "ends with an empty item" -- run resnet50 --scale tiny --set widths=layer2.0.conv1:8,
expect_exit 2 "names layer2.0.conv1 twice" -- run resnet50 --scale tiny --set widths=layer2.0.conv1:8,layer2.0.conv1:9

# Bad input: exit 2, the reason named, no document written.
expect_exit 2 "is not a regular expression" -- shapes resnet50 "${common[@]}" --layers '(' --out "$WORK/bad.json"
expect_exit 2 "matches none of resnet50's 18 layers" -- shapes resnet50 "${common[@]}" --layers nothing --out "$WORK/bad.json"
expect_exit 2 "--channels 'abc'" -- shapes resnet50 "${common[@]}" --channels abc --out "$WORK/bad.json"
expect_exit 2 "LO is above HI" -- shapes resnet50 "${common[@]}" --channels 8:4:1
expect_exit 2 "outside 1..128 for a layer of 8 channels" -- shapes resnet50 "${common[@]}" --channels 200 --layers '^conv1$'
expect_exit 2 "needs --repeat 2 or more" -- shapes resnet50 --scale tiny --repeat 1
expect_exit 2 "--ratio 1.5 must be above 0" -- shapes resnet50 "${common[@]}" --ratio 1.5
expect_exit 2 "not auto" -- shapes resnet50 --scale tiny --warmup auto
expect_exit 2 "unknown workload" -- shapes nope
expect_exit 2 "names no convolution or linear layer" -- shapes a3c --scale tiny --repeat 2 --iters 1 --warmup 1
[ ! -e "$WORK/bad.json" ] || fail "a refused tbd shapes wrote its --out file"

finish
