# tbd report over a fixture folder this test writes (results with memory and
# ops sections at three batch sizes, a scale file, a sweep file with an
# out-of-memory point, a suite index with a failure, a stray trace): Markdown
# and HTML have every section; the HTML opens in headless chromium without
# errors and every chart draws, also when a workload name carries markup.
# Results with a field of the wrong type or a symbolic-link loop are named.
# Exit 77 (skipped, reason printed) when chromium is not installed;
# scripts/setup installs it.
source "$(dirname "$0")/lib.sh"
# Every document here is a hand-made fixture (some broken on purpose); tbd writes none.
SCHEMA_EXEMPT="."

fixture="$WORK/results"
python3 - "$fixture" <<'PY'
import json, os, sys
root = sys.argv[1]
os.makedirs(root + "/sweep", exist_ok=True)
os.makedirs(root + "/suite", exist_ok=True)
cats = ["weights", "weight_gradients", "optimizer_state", "inputs", "feature_maps", "workspace", "dynamic", "other"]
classes = ["conv", "gemm", "rnn", "attention", "norm", "elementwise", "reduction", "data movement", "optimizer",
           "communication", "other"]
def result(name, batch, unit, base_time, world=1):
    times = [base_time * batch * (1 + 0.02 * ((i * 7) % 5)) for i in range(10)]
    options = {"scale": "tiny", "batch_size": batch, "precision": "fp32", "device": "cpu", "threads": 2,
               "data": "synthetic", "settings": {}, "seed": 42}
    if world > 1: options["world_size"] = world
    breakdown = {c: (i + 1) * 1000 * (batch if c in ("inputs", "feature_maps") else 1) for i, c in enumerate(cats)}
    by_class = {c: {"calls": 1, "self_s": 0.1, "share_of_self": (1.0 / len(classes))} for c in classes}
    return {"schema": "tbd.result/1", "created_utc": "2026-01-01T00:00:00Z",
            "workload": {"name": name, "settings": {"depth": "50"}, "options": options},
            "environment": {"cpu": {"model": "Fixture CPU", "cores_available_to_process": 2},
                            "libtorch": {"version": "2.13.0"}, "os": {"hostname": "fixture"}},
            "iterations": times,
            "summary": {"median_s": sorted(times)[5], "cv": 0.03},
            "throughput": {"samples_per_s": batch / (sum(times) / len(times)), "unit": unit,
                           "ci95": [0.9 * batch / (sum(times) / len(times)), 1.1 * batch / (sum(times) / len(times))],
                           "repetitions": [{"samples": 5.0 * batch, "seconds": sum(times[5 * k:5 * k + 5]),
                                            "samples_per_s": 5.0 * batch / sum(times[5 * k:5 * k + 5])} for k in (0, 1)]},
            "cpu": {"utilisation": 0.5 + 0.1 * batch / 4},
            "flops": {"utilization": {"measured": 0.1 * batch / 4}},
            "memory": {"peak_bytes": sum(breakdown.values()), "breakdown": breakdown,
                       # feature maps rise through forward and fall through backward
                       "timeline": {"t_s": [0.001 * i for i in range(9)],
                                    "bytes": {c: [breakdown[c] * (min(i, 8 - i) / 4 if c == "feature_maps" else 1)
                                                  for i in range(9)] for c in cats}}},
            # per layer over 2 instrumented iterations: layer1 2 + 4 ms, layer2 and the rest 1 + 1 ms
            "ops": {"by_class": by_class, "iterations": 2,
                    "by_layer": [{"layer": "layer1", "forward_self_s": 0.004, "backward_self_s": 0.008,
                                  "self_s": 0.012, "share_of_self": 0.6, "calls": 10},
                                 {"layer": "layer2", "forward_self_s": 0.002, "backward_self_s": 0.002,
                                  "self_s": 0.004, "share_of_self": 0.2, "calls": 4},
                                 {"layer": "(no layer)", "forward_self_s": 0.002, "backward_self_s": 0.002,
                                  "self_s": 0.004, "share_of_self": 0.2, "calls": 4}]},
            "partial": False,
            # ms per iteration: data 1, forward 2, backward 3, communication 0, optimizer 4, other 0.5
            "phases": {"iteration_ms": 10.5, "data_ms": 1.0, "forward_ms": 2.0, "backward_ms": 3.0,
                       "communication_ms": 0.0, "optimizer_ms": 4.0, "other_ms": 0.5},
            # a GEMM 6 ms compute-bound (4 ms above its ceiling), an add 2 ms memory-bound
            "roofline": {"ceilings": {"compute": {"flops_per_s": 1e11}, "memory_bandwidth": {"bytes_per_s": 1e10},
                                      "dispatch_overhead": {"seconds_per_op": 1e-6}},
                         "by_op": [{"op": "aten::mm", "bound": "compute", "seconds": 0.006, "headroom_s": 0.004,
                                    "intensity": 50.0, "achieved_flops_per_s": 3.3e10},
                                   {"op": "aten::add", "bound": "memory", "seconds": 0.002, "headroom_s": 0.001,
                                    "intensity": 0.0, "achieved_flops_per_s": 0.0}],
                         "by_layer": [{"layer": "layer1", "seconds": 0.006, "headroom_s": 0.003,
                                       "seconds_by_bound": {"compute": 0.005, "memory": 0.001, "overhead": 0.0}}]}}
for b in (1, 2, 4):
    json.dump(result("resnet50", b, "images/s", 0.01), open(f"{root}/sweep/bs-{b}.json", "w"))
json.dump({"schema": "tbd.sweep/1", "workload": "resnet50", "points": [
    {"batch_size": 1, "status": "ok"}, {"batch_size": 2, "status": "ok"}, {"batch_size": 4, "status": "ok"},
    {"batch_size": 8, "status": "out_of_memory", "error": "peak memory exceeds the limit"}],
    "largest_fitting_batch": 4, "stopped_by": "out of memory at batch size 8"}, open(f"{root}/sweep/sweep.json", "w"))
json.dump(result("ncf", 256, "samples/s", 0.0001), open(f"{root}/suite/ncf.json", "w"))
json.dump({"schema": "tbd.suite/1", "preset": "quick", "runs": [
    {"workload": "ncf", "status": "ok", "file": "ncf.json"},
    {"workload": "gpt", "status": "failed", "error": "out of host memory at batch size 4"}]},
    open(f"{root}/suite/index.json", "w"))
points = []
for n, eff in ((1, 1.0), (2, 0.9)):
    r = result("resnet50", 4, "images/s", 0.01, world=n)
    points.append({"nproc": n, "samples_per_s": 400 * n * eff, "speedup": n * eff, "efficiency": eff, "result": r})
json.dump({"schema": "tbd.scale/1", "workload": "resnet50", "unit": "images/s", "baseline_nproc": 1,
           "points": points}, open(f"{root}/scale.json", "w"))
json.dump({"traceEvents": []}, open(f"{root}/trace.json", "w"))
# tbd predict's document: 2 ranks of resnet50 checked (predicted 750, measured 720), a memory line checked.
json.dump({"schema": "tbd.prediction/1", "base": "base.json", "base_label": "resnet50 tiny b4 fp32", "predictions": [
    {"kind": "data_parallel", "ranks": 2, "unit": "images/s", "global_samples_per_s": 750.0, "speedup": 1.875,
     "check": {"command": "tbd run", "result": "nproc-2.json", "measured_global_samples_per_s": 720.0,
               "error": 750.0 / 720.0 - 1}},
    {"kind": "memory_limit", "limit_bytes": 1 << 30, "first_out_of_memory_doubling": 64,
     "check": {"command": "tbd sweep", "sweep": "sweep.json", "measured_first_out_of_memory_batch": 64,
               "doubling_steps_off": 0.0}}]}, open(f"{root}/prediction.json", "w"))
# tbd shapes' document: one layer shape with a cliff at 56 (2.0x the time of 64).
def point(c, ms):
    t = {"mean_s": ms / 1e3, "ci95_mean_s": [0.95 * ms / 1e3, 1.05 * ms / 1e3], "cv": 0.02, "n": 5}
    return {"channels": c, "forward": t, "training": t}
geometry = {"kind": "conv2d", "input": [8, 64, 14, 14], "weight": [64, 64, 3, 3], "bias": False, "dtype": "float32",
            "channels_last": False, "input_requires_grad": True, "stride": [1, 1], "padding": [1, 1],
            "dilation": [1, 1], "groups": 1, "transposed": False}
json.dump({"schema": "tbd.shapes/1", "workload": {"name": "resnet50", "options": {"device": "cpu"}},
           "step": {"mean_s": 0.1, "ci95_mean_s": [0.09, 0.11], "n": 6, "definition": "fixture"},
           "layers": [{"modules": ["layer3.0.conv2", "layer3.1.conv2"], "geometry": geometry, "original_channels": 64,
                       "calls_per_iteration": 2, "in_model_s": 0.01, "share_of_step": 0.1,
                       "curve": [point(48, 0.8), point(56, 2.0), point(64, 1.0)],
                       "cliffs": [{"channels": 56, "faster_channels": 64, "ratio": 2.0}],
                       "forward_cliffs": [], "front": [48, 64],
                       "at_ratio": {"bound": 48, "naive": {"channels": 48, "training_s": 0.0008},
                                    "aware": {"channels": 48, "training_s": 0.0008}}}],
           "not_swept": [],
           "prediction": {"ratio": 0.75, "definition": "fixture", "step_s": 0.1, "naive_step_s": 0.098,
                          "aware_step_s": 0.098}}, open(f"{root}/shapes.json", "w"))
# A CUDA run: FLOP/s, NVML, the kernel view, device time and the caching allocator.
os.makedirs(root + "/gpu", exist_ok=True)
g = result("gpt", 8, "tokens/s", 0.001)
g["workload"]["options"].update({"device": "cuda:0", "precision": "bf16"})
g["flops"] = {"achieved_flops_per_s": 1.234e14, "utilization": {"measured": 0.45}}
g["gpu"] = {"utilization_gpu": {"mean": 0.8}, "kernel_busy_share": 0.9}
g["device_time"] = {"median_s": 0.0075}
g["memory"]["cuda_allocator"] = {"reserved_peak_bytes": 3 * 1024 ** 3, "fragmentation": 0.125}
json.dump(g, open(f"{root}/gpu/gpt.json", "w"))
PY

# Markdown: every section with data, the failures, the skipped file.
expect_exit 0 "wrote .*report.md \(5 runs\)" -- report "$fixture" --format md --out "$WORK/report.md"
md="$WORK/report.md"
for section in "## Runs" "## Failed, out-of-memory and skipped runs" "## Throughput and utilisation against batch size" \
               "## Memory at the peak, by category" "## Time by operator class" "## Scaling efficiency" \
               "## Run-to-run dispersion" "## GPU: FLOP/s, utilisation, kernels" "## Where an iteration's time goes" \
               "## Roofline" "## Findings" "## Memory over an iteration" "## Predictions" "## Layer shapes"; do
  grep -q "^$section" "$md" || fail "report.md lacks '$section'"
done
grep -q "Not available" "$md" && fail "report.md says a section is not available although the fixture has its data"
grep -q "largest batch size that fits: 4" "$md" || fail "report.md lacks the sweep's largest fitting batch"
grep -qE '^\| layer3.0.conv2 \+1 \| \[8, 64, 14, 14\] conv2d 3x3 \| 64 \| 1 ms \| 10.0% \| 56 channels take 2.00x the time of 64 \|' "$md" \
  || fail "report.md lacks the layer-shape row: $(grep -A6 '## Layer shapes' "$md")"
# Findings come from the figures: backward 3 of 10.5 ms is 29%, optimizer 4 ms 38%.
grep -q "^- Time: optimizer 38% and backward 29% of the 10.5 ms iteration.$" "$md" \
  || fail "report.md lacks the phase finding: $(grep -m3 '^- ' "$md")"
grep -qE '^\| resnet50 tiny b4 fp32 \| 2 data-parallel ranks \| 750 images/s \| 720 images/s \| \+4.2% \|' "$md" \
  || fail "report.md lacks the prediction row: $(grep -A5 '## Predictions' "$md")"
grep -qE '^\| ncf tiny b256 fp32 \| [0-9.e+]+ samples/s \| \[[0-9.e+]+, [0-9.e+]+\] \|' "$md" \
  || fail "report.md lacks the throughput CI: $(grep 'ncf tiny' "$md" | head -2)"
grep -qE '^\| resnet50 tiny b1 fp32 \| 9 \| 8 ms \| ' "$md" || fail "report.md lacks the memory timeline row"
grep -q "| gpt | failed | out of host memory" "$md" || fail "report.md lacks the failed suite run"
grep -q "| resnet50 batch 8 | out_of_memory" "$md" || fail "report.md lacks the sweep's out-of-memory point"
grep -q "trace.json" "$md" || fail "report.md does not list the skipped trace.json"
grep -qE '^\| gpt tiny b8 bf16 cuda:0 [^|]*\| 123.4 T \| 45.0% \| 80.0% \| 90.0% \| 7.5' "$md" \
  || fail "report.md lacks the GPU row (FLOP/s, % of peak, NVML, kernel busy, device time): $(grep cuda "$md")"
grep -qE '3.00 GiB \| 12.5% \|$' "$md" || fail "report.md lacks the allocator's reserved peak and fragmentation"
# The phases row: each phase in ms, and their sum.
grep -qE '^\| resnet50 tiny b1 fp32 \| 1 ms \| 2 ms \| 3 ms \| 0 ms \| 4 ms \| 0.5 ms \| 10.5 ms \|$' "$md" \
  || fail "report.md lacks the phase times row: $(grep -A3 "Where an iteration" "$md")"
grep -qE '^\| resnet50 tiny b1 fp32 \| 75.0% \| 25.0% \| 0.0% \| aten::mm \(compute-bound\): 4 ms per iteration \|$' "$md" \
  || fail "report.md lacks the roofline row: $(grep -A6 "## Roofline" "$md")"
# Per layer: ms per instrumented iteration, forward and backward, the share,
# the bound most of its time has and its headroom; the unattributed rest last.
grep -qE '^\| layer1 \| 2.000 \| 4.000 \| 60.0% \| compute-bound \| 3.000 \|$' "$md" \
  || fail "report.md lacks the layer row: $(grep -A8 "## Time by layer" "$md")"
grep -qE '^\| \(no layer\) \| 1.000 \| 1.000 \| 20.0% \| - \| - \|$' "$md" || fail "report.md lacks the (no layer) row"
grep -q "Layers: layer1 takes 60% of operator time (backward 2.0x its forward), 83% compute-bound." "$md" \
  || fail "report.md lacks the layer finding: $(grep 'Layers:' "$md")"
# Throughput rows of the sweep: batch 1, 2 and 4.
[ "$(grep -cE '^\| (1|2|4) \| [0-9.]+ \|' "$md")" -ge 3 ] || fail "report.md lacks the sweep table rows"

# Markdown on stdout by default; a section without data says why.
mkdir -p "$WORK/only-ncf"
cp "$fixture/suite/ncf.json" "$WORK/only-ncf/"
"$TBD" report "$WORK/only-ncf" > "$WORK/only.md" || fail "report to stdout failed"
grep -q "Not available: no configuration was run at two or more batch sizes" "$WORK/only.md" \
  || fail "a report without sweeps does not say why the section is missing"
grep -q "Not available: no tbd.scale/1 file" "$WORK/only.md" || fail "missing scaling reason"
grep -q "Not available: no run used a CUDA device" "$WORK/only.md" || fail "missing the GPU section's reason"

# Errors.
expect_exit 2 "format must be md or html" -- report "$fixture" --format pdf
expect_exit 2 "no such file or folder" -- report "$WORK/nosuch"
mkdir -p "$WORK/none"
expect_exit 1 "no tbd results here" -- report "$WORK/none"
echo '{"schema": "tbd.suite/7"}' > "$WORK/none/index.json"
expect_exit 1 "index.json: unknown schema 'tbd.suite/7'" -- report "$WORK/none"

# HTML: one file, nothing fetched.
html="$WORK/report.html"
expect_exit 0 "wrote" -- report "$fixture" --format html --out "$html"
grep -Eq '<(script|link|img)[^>]+(src|href)="' "$html" && fail "report.html loads something from elsewhere"
grep -q "Chart.js v4" "$html" || fail "report.html does not inline Chart.js"
charts=$(grep -o '<canvas id="chart-' "$html" | wc -l)
[ "$charts" -ge 8 ] || fail "report.html has $charts charts, expected at least 8"

# Hostile text in result files: a workload name that closes the chart data's
# script element and opens an HTML comment, Markdown that would start a
# heading, raw HTML and table pipes. The reports escape it all.
hostile="$WORK/hostile"
python3 - "$fixture" "$hostile" <<'PY'
import json, os, sys
fixture, root = sys.argv[1], sys.argv[2]
os.makedirs(root)
for b in (1, 2, 4):
    r = json.load(open(f"{fixture}/sweep/bs-{b}.json"))
    r["workload"]["name"] = "</script><!--<script>alert(1)</script>\n# Injected & <b>bold</b> | cell"
    r["environment"]["os"]["hostname"] = "=cmd|' /C calc'!A0\n## Owned"
    json.dump(r, open(f"{root}/bs-{b}.json", "w"))
PY
expect_exit 0 "wrote" -- report "$hostile" --format md --out "$WORK/hostile.md"
grep -nE '^#+ (Injected|Owned)' "$WORK/hostile.md" && fail "a name with a newline injected a Markdown heading"
grep -n '<script\|<b>' "$WORK/hostile.md" && fail "raw HTML from a result file reached report.md"
grep -q '&lt;/script&gt;&lt;!--&lt;script&gt;alert(1)&lt;/script&gt; # Injected &amp; &lt;b&gt;bold&lt;/b&gt; \\| cell' "$WORK/hostile.md" \
  || fail "report.md does not show the hostile name escaped: $(grep -m1 Injected "$WORK/hostile.md")"
hostile_html="$WORK/hostile.html"
expect_exit 0 "wrote" -- report "$hostile" --format html --out "$hostile_html"
hostile_charts=$(grep -o '<canvas id="chart-' "$hostile_html" | wc -l)
[ "$hostile_charts" -ge 4 ] || fail "hostile.html has $hostile_charts charts, expected at least 4"

# A result whose field has the wrong JSON type: report and compare name the file and the field.
mkdir -p "$WORK/typed"
python3 - "$fixture/suite/ncf.json" "$WORK/typed/ncf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["workload"]["options"]["batch_size"] = "256"
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit 1 "typed/ncf.json: field 'workload.options.batch_size' must be an integer >= 1, found \"256\" \(a string\)" -- \
  report "$WORK/typed"
expect_exit 2 "typed/ncf.json: field 'workload.options.batch_size' must be an integer" -- \
  compare "$fixture/suite/ncf.json" "$WORK/typed/ncf.json"
# A loop of symbolic links in the folder: named, not "filesystem error".
ln -s "$WORK/typed/loop.json" "$WORK/typed/loop.json"
rm "$WORK/typed/ncf.json"
expect_exit 1 "typed/loop.json: a loop of symbolic links" -- report "$WORK/typed"

if [ "$FAILURES" -gt 0 ]; then finish; fi
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIPPED: the browser check needs chromium (Debian package chromium; scripts/setup installs it)"
  exit 77
fi
# The page marks what it drew; --dump-dom prints the DOM after the load event.
# check_rendered HTML CHARTS: chromium ran the page, drew every chart, saw no error.
check_rendered() {
  local html="$1" charts="$2" dom="$WORK/dom-$(basename "$1").html" log="$WORK/browser-$(basename "$1").log"
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --virtual-time-budget=5000 \
    --enable-logging=stderr --v=0 --dump-dom "file://$html" > "$dom" 2> "$log"
  grep -q 'data-charts-expected=' "$dom" || { fail "chromium did not run the script of $html: $(tail -5 "$log")"; return; }
  python3 - "$dom" "$charts" <<'PY' || fail "$html did not render cleanly in chromium"
import re, sys
dom = open(sys.argv[1]).read()
expected = int(sys.argv[2])
body = re.search(r'<body([^>]*)>', dom).group(1)
attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body))
errors = re.search(r'<pre id="tbd-errors">(.*?)</pre>', dom, re.S).group(1)
states = re.findall(r'<canvas id="(chart-\d+)"[^>]*data-rendered="(\w+)"', dom)
ok = (attrs.get("data-errors") == "0" and attrs.get("data-charts-expected") == str(expected)
      and attrs.get("data-charts-rendered") == str(expected) and len(states) == expected
      and all(s == "yes" for _, s in states))
if not ok:
    print("body:", attrs, "errors:", errors, "canvases:", states, file=sys.stderr)
    sys.exit(1)
print(f"chromium: {expected} charts rendered, no errors")
PY
  grep -E 'Uncaught|CONSOLE.*(Error|error)' "$log" && fail "chromium logged script errors on $html (above)"
}
check_rendered "$html" "$charts"
# A/B: the sweep folder against itself: every configuration matched, no change.
ab_html="$WORK/ab.html"
expect_exit 0 "wrote" -- report "$fixture/sweep" "$fixture/sweep" --format html --out "$ab_html"
grep -q "A/B: .*sweep against .*sweep" "$ab_html" || fail "ab.html lacks the A/B section"
ab_charts=$(grep -o '<canvas id="chart-' "$ab_html" | wc -l)
check_rendered "$ab_html" "$ab_charts"
expect_exit 0 "" -- report "$fixture/sweep" "$fixture/sweep" --format md --out "$WORK/ab.md"
grep -qE '^\| resnet50 tiny b2 fp32 \| [0-9.]+ [a-z]+/s \| [0-9.]+ [a-z]+/s \| 1.000 \|' "$WORK/ab.md" \
  || fail "ab.md lacks the A/B row: $(grep -A5 '## A/B' "$WORK/ab.md")"
# The hostile name: every chart still draws (unescaped, "<!--<script>" swallowed the drawing code).
check_rendered "$hostile_html" "$hostile_charts"
finish
