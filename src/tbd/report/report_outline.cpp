#include "tbd/report/report_outline.h"

#include <fmt/format.h>

#include <cmath>

#include "tbd/core/number_format.h"
#include "tbd/core/statistics.h"
#include "tbd/measure/ops/layer_attribution.h"

namespace tbd {
namespace {

using MaybeSection = std::optional<ReportSection>;

// Why a section is empty, shown as "Not available: REASON." in both formats.
constexpr const char* kNoMachinesReason = "no result file";
constexpr const char* kNoAbReason = "no configuration is in both sets";
constexpr const char* kNoRunsReason = "no result files (only indexes)";
constexpr const char* kNoRunsButScalesReason = "no result files (only scaling files)";
constexpr const char* kNoFindingsReason = "no result carries the figures findings are computed from";
constexpr const char* kNoDispersionReason = "no result file with measured iterations";
constexpr const char* kNoGpuReason = "no run used a CUDA device (tbd run --device cuda; scripts/gpu-check)";
constexpr const char* kNoSweepReason =
    "no configuration was run at two or more batch sizes (tbd sweep W --batch-sizes 1,2,4 makes such runs)";
constexpr const char* kNoMemoryReason = "no run used the memory probe (--probes ...,memory)";
constexpr const char* kNoOpsReason = "no run used the ops probe (--probes ...,ops)";
constexpr const char* kNoLayersReason =
    "no run recorded per-layer time (the ops probe, --probes ...,ops, with a tbd whose models mark their layers)";
constexpr const char* kNoPhasesReason =
    "no result records phase times (CPU runs of this tbd record them; CUDA runs cannot: their phases are asynchronous)";
constexpr const char* kNoRooflineReason =
    "no run used the roofline probe with measured ceilings (tbd env --peak, then --probes ...,roofline)";
constexpr const char* kNoPredictionReason =
    "no tbd.prediction/1 file (tbd predict BASE.json --nproc 2 --check --out FILE makes one)";
constexpr const char* kNoShapesReason = "no tbd.shapes/1 file (tbd shapes W --out FILE makes one)";
constexpr const char* kNoScaleReason = "no tbd.scale/1 file (tbd scale W --nproc 1,2 --out FILE makes one)";

std::string ci_text(double low, double high) {
  return std::isfinite(low) ? "[" + format_number(low) + ", " + format_number(high) + "]" : "-";
}

// A section of one table with the chart drawn from it, or the reason it has none.
ReportSection charted_table(std::string title, ReportTable t, ReportChartKind chart, const char* reason) {
  if (t.rows.empty()) return {std::move(title), {ReportNotAvailable{reason}}};
  return {std::move(title), {ReportChart{chart}, std::move(t)}};
}

MaybeSection machines_analysis(const ReportModel& m) {
  ReportSection s;
  s.parts.push_back(ReportParagraph{"Machines:"});
  if (m.environments.empty())
    s.parts.push_back(ReportNotAvailable{kNoMachinesReason});
  else
    s.parts.push_back(ReportList{m.environments});
  return s;
}

MaybeSection ab_comparison_analysis(const ReportModel& m) {
  if (!m.ab) return std::nullopt;
  const AbView& ab = *m.ab;
  ReportSection s{"A/B: " + ab.new_source + " against " + ab.base_source, {}};
  if (ab.rows.empty()) {
    s.parts.push_back(ReportNotAvailable{kNoAbReason});
  } else {
    ReportTable t{{"configuration", "base", "new", "time per sample new/base", "95% CI", "verdict"}, {}, ""};
    for (const auto& r : ab.rows)
      t.rows.push_back({r.label, format_number(r.base_throughput) + " " + r.unit + "/s",
                        format_number(r.new_throughput) + " " + r.unit + "/s",
                        std::isfinite(r.ratio) ? fmt::format("{:.3f}", r.ratio) : "-",
                        std::isfinite(r.low) ? fmt::format("[{:.3f}, {:.3f}]", r.low, r.high) : "-", r.verdict});
    s.parts.push_back(ReportChart{ReportChartKind::kAbChange});
    s.parts.push_back(t);
  }
  for (const auto& w : ab.warnings) s.parts.push_back(ReportParagraph{"Warning: " + w});
  if (!ab.only_in_base.empty() || !ab.only_in_new.empty())
    s.parts.push_back(ReportParagraph{
        fmt::format("Only in base: {}. Only in new: {}.", ab.only_in_base.size(), ab.only_in_new.size())});
  return s;
}

MaybeSection runs_analysis(const ReportModel& m) {
  ReportSection s{"Runs", {}};
  if (m.runs.empty()) {
    s.parts.push_back(ReportNotAvailable{m.scales.empty() ? kNoRunsReason : kNoRunsButScalesReason});
    return s;
  }
  ReportTable t{{"configuration", "throughput", "95% CI", "median iteration", "CV", "CPU util.", "FLOP/s of peak",
                 "peak memory", "file"},
                {},
                "lrrrrrrrl"};
  for (const auto& r : m.runs)
    t.rows.push_back({r.label + (r.partial ? " (partial)" : ""), format_number(r.throughput) + " " + r.unit,
                      ci_text(r.ci_low, r.ci_high), format_ms(r.median_s), format_percent(r.cv), format_percent(r.cpu),
                      format_percent(r.flops), format_bytes(r.peak_bytes), r.file});
  s.parts.push_back(t);
  s.parts.push_back(ReportChart{ReportChartKind::kThroughput});
  return s;
}

MaybeSection findings_analysis(const ReportModel& m) {
  ReportSection s{"Findings", {}};
  for (const auto& r : m.runs) {
    if (r.findings.empty()) continue;
    s.parts.push_back(ReportSubheading{r.label});
    s.parts.push_back(ReportList{r.findings});
  }
  if (s.parts.empty()) s.parts.push_back(ReportNotAvailable{kNoFindingsReason});
  return s;
}

MaybeSection not_run_analysis(const ReportModel& m) {
  if (m.not_run.empty()) return std::nullopt;
  ReportTable t{{"run", "status", "error", "recorded in"}, {}, "llll"};
  for (const auto& n : m.not_run) t.rows.push_back({n.what, n.status, n.error, n.file});
  return ReportSection{"Failed, out-of-memory and skipped runs", {t}};
}

MaybeSection sweeps_analysis(const ReportModel& m) {
  ReportSection s{"Throughput and utilisation against batch size", {}};
  if (m.sweeps.empty()) s.parts.push_back(ReportNotAvailable{kNoSweepReason});
  for (size_t i = 0; i < m.sweeps.size(); ++i) {
    const auto& series = m.sweeps[i];
    ReportTable t{
        {"batch", "throughput (" + series.unit + ")", "CPU util.", "FLOP/s of peak", "peak memory"}, {}, "rrrrr"};
    for (const auto& p : series.points)
      t.rows.push_back({std::to_string(p.batch), format_number(p.throughput), format_percent(p.cpu),
                        format_percent(p.flops), format_bytes(p.peak_bytes)});
    s.parts.push_back(ReportSubheading{series.label});
    s.parts.push_back(ReportChart{ReportChartKind::kSweep, i});
    s.parts.push_back(t);
  }
  for (const auto& f : m.sweep_files) {
    std::string tried;
    for (const auto& [b, status] : f.statuses) tried += (tried.empty() ? "" : ", ") + std::to_string(b) + " " + status;
    s.parts.push_back(
        ReportParagraph{fmt::format("Sweep {} ({}): batch sizes {}; largest batch size that fits: {}{}.", f.workload,
                                    f.file, tried, f.largest_fit > 0 ? std::to_string(f.largest_fit) : "none",
                                    f.stopped_by.empty() ? "" : "; stopped: " + f.stopped_by)});
  }
  return s;
}

MaybeSection gpu_analysis(const ReportModel& m) {
  ReportSection s{"GPU: FLOP/s, utilisation, kernels and the caching allocator", {}};
  ReportTable t{{"configuration", "FLOP/s", "of peak", "GPU util. (NVML)", "kernel busy", "device iteration",
                 "peak memory", "reserved peak", "fragmentation"},
                {},
                ""};
  for (const auto& r : m.runs) {
    if (!r.on_gpu) continue;
    t.rows.push_back({r.label, std::isnan(r.achieved_flops) ? "-" : format_number(r.achieved_flops / 1e12) + " T",
                      format_percent(r.flops), format_percent(r.gpu_util), format_percent(r.kernel_busy),
                      format_ms(r.device_median_s), format_bytes(r.peak_bytes), format_bytes(r.reserved_bytes),
                      format_percent(r.fragmentation)});
  }
  if (t.rows.empty())
    s.parts.push_back(ReportNotAvailable{kNoGpuReason});
  else
    s.parts.push_back(t);
  return s;
}

MaybeSection memory_at_peak_analysis(const ReportModel& m) {
  ReportTable t{{"configuration", "peak"}, {}, ""};
  for (const auto& c : memory_categories()) t.header.push_back(c);
  for (const auto& r : m.runs) {
    if (r.memory.empty()) continue;
    std::vector<std::string> row = {r.label, format_bytes(r.peak_bytes)};
    for (const auto& [c, bytes] : r.memory) row.push_back(format_bytes(bytes));
    t.rows.push_back(row);
  }
  return charted_table("Memory at the peak, by category", t, ReportChartKind::kMemoryAtPeak, kNoMemoryReason);
}

MaybeSection memory_timeline_analysis(const ReportModel& m) {
  ReportSection s{"Memory over an iteration", {}};
  ReportTable t{{"configuration", "points", "span", "highest recorded point", "at"}, {}, ""};
  for (size_t i = 0; i < m.runs.size(); ++i) {
    const auto& r = m.runs[i];
    const auto& tl = r.memory_timeline;
    if (tl.t_s.size() < 2) continue;
    size_t at = 0;
    double peak = -1;
    for (size_t p = 0; p < tl.t_s.size(); ++p) {
      double live = 0;
      for (const auto& c : tl.bytes) live += c[p];
      if (live > peak) peak = live, at = p;
    }
    t.rows.push_back({r.label, std::to_string(tl.t_s.size()), format_ms(tl.t_s.back() - tl.t_s.front()),
                      format_bytes(peak), format_ms(tl.t_s[at] - tl.t_s.front())});
    s.parts.push_back(ReportChart{ReportChartKind::kMemoryTimeline, i});
  }
  if (t.rows.empty())
    s.parts.push_back(ReportNotAvailable{kNoMemoryReason});
  else
    s.parts.push_back(t);
  return s;
}

MaybeSection phases_analysis(const ReportModel& m) {
  ReportTable t{{"configuration"}, {}, ""};
  for (const auto& p : report_phases()) t.header.push_back(p);
  t.header.push_back("iteration");
  for (const auto& r : m.runs) {
    if (r.phases_ms.empty()) continue;
    std::vector<std::string> row = {r.label};
    double total = 0;
    for (const auto& [p, ms] : r.phases_ms) row.push_back(format_ms(ms / 1e3)), total += ms;
    row.push_back(format_ms(total / 1e3));
    t.rows.push_back(row);
  }
  return charted_table("Where an iteration's time goes (ms per timed iteration)", t, ReportChartKind::kPhases,
                       kNoPhasesReason);
}

MaybeSection roofline_analysis(const ReportModel& m) {
  ReportSection s{"Roofline: what bounds each operator", {}};
  ReportTable t{{"configuration", "compute-bound", "memory-bound", "overhead-bound", "most headroom"}, {}, "lrrrl"};
  std::vector<ReportPart> charts;
  for (size_t i = 0; i < m.runs.size(); ++i) {
    const auto& v = m.runs[i].roofline;
    if (!v.judged) continue;
    const double total = v.compute_s + v.memory_s + v.overhead_s;
    const auto share = [&](double x) { return format_percent(total > 0 ? x / total : NAN); };
    t.rows.push_back({m.runs[i].label, share(v.compute_s), share(v.memory_s), share(v.overhead_s),
                      v.top_op.empty() ? "-"
                                       : v.top_op + " (" + v.top_bound + "-bound): " + format_ms(v.top_headroom_s) +
                                             " per iteration"});
    if (!v.points.empty()) charts.push_back(ReportChart{ReportChartKind::kRoofline, i});
  }
  if (t.rows.empty()) return ReportSection{s.title, {ReportNotAvailable{kNoRooflineReason}}};
  s.parts.push_back(ReportParagraph{
      "Operator time by the ceiling that bounds it (docs/metrics.md#roofline), and the operator with the most time "
      "above its ceiling."});
  s.parts.insert(s.parts.end(), charts.begin(), charts.end());
  s.parts.push_back(t);
  return s;
}

MaybeSection op_classes_analysis(const ReportModel& m) {
  ReportTable t{{"configuration"}, {}, ""};
  for (const auto& r : m.runs) {
    if (r.op_classes.empty()) continue;
    if (t.rows.empty())  // the classes of the first run with the ops probe: every run records them in one order
      for (const auto& [c, share] : r.op_classes) t.header.push_back(c);
    std::vector<std::string> row = {r.label};
    for (const auto& [c, share] : r.op_classes) row.push_back(format_percent(share));
    t.rows.push_back(row);
  }
  return charted_table("Time by operator class (share of operator self time)", t, ReportChartKind::kOpClasses,
                       kNoOpsReason);
}

// The largest 12 layers of a run, and the unattributed rest.
ReportTable layer_rows_table(const ReportRun& run) {
  constexpr size_t kLimit = 12;
  ReportTable t{
      {"layer", "forward ms", "backward ms", "share of operator time", "bound (roofline)", "headroom ms"}, {}, ""};
  for (const auto& l : run.layers) {
    if (t.rows.size() == kLimit && l.layer != kNoLayer) continue;  // the unattributed rest is always shown
    t.rows.push_back({l.layer, fmt::format("{:.3f}", l.forward_ms), fmt::format("{:.3f}", l.backward_ms),
                      format_percent(l.share), l.bound.empty() ? "-" : l.bound + "-bound",
                      std::isfinite(l.headroom_ms) ? fmt::format("{:.3f}", l.headroom_ms) : "-"});
  }
  return t;
}

MaybeSection layers_analysis(const ReportModel& m) {
  ReportSection s{"Time by layer (operator self time, ms per instrumented iteration)", {}};
  for (size_t i = 0; i < m.runs.size(); ++i) {
    if (m.runs[i].layers.empty()) continue;
    s.parts.push_back(ReportSubheading{m.runs[i].label});
    s.parts.push_back(ReportChart{ReportChartKind::kLayers, i});
    s.parts.push_back(layer_rows_table(m.runs[i]));
  }
  if (s.parts.empty()) s.parts.push_back(ReportNotAvailable{kNoLayersReason});
  return s;
}

MaybeSection scaling_analysis(const ReportModel& m) {
  ReportSection s{"Scaling efficiency against process count", {}};
  if (m.scales.empty()) return ReportSection{s.title, {ReportNotAvailable{kNoScaleReason}}};
  s.parts.push_back(ReportChart{ReportChartKind::kScalingEfficiency});
  s.parts.push_back(ReportChart{ReportChartKind::kScalingSpeedup});
  for (const auto& series : m.scales) {
    ReportTable t{{"processes", "throughput (" + series.unit + ")", "speed-up", "efficiency"}, {}, "rrrr"};
    for (const auto& p : series.points)
      t.rows.push_back({std::to_string(p.nproc), format_number(p.throughput), fmt::format("{:.3f}", p.speedup),
                        format_percent(p.efficiency)});
    s.parts.push_back(ReportSubheading{series.label + " (" + series.file + ")"});
    s.parts.push_back(t);
  }
  return s;
}

MaybeSection predictions_analysis(const ReportModel& m) {
  ReportSection s{"Predictions (tbd predict)", {}};
  if (m.predictions.empty()) return ReportSection{s.title, {ReportNotAvailable{kNoPredictionReason}}};
  ReportTable t{{"base", "what", "predicted", "measured (--check)", "error", "file"}, {}, ""};
  for (const auto& p : m.predictions) {
    const std::string unit = p.unit == "batch" ? "" : " " + p.unit;
    t.rows.push_back({p.base_label, p.what, format_number(p.predicted) + unit,
                      std::isfinite(p.measured) ? format_number(p.measured) + unit : "not checked",
                      format_signed_percent(p.error), p.file});
  }
  s.parts.push_back(t);
  return s;
}

// Per shapes file: the pruning estimate, a table of the layer shapes and a
// chart of each one's time against channels (cliffs and the
// performance-aware counts marked).
MaybeSection shapes_analysis(const ReportModel& m) {
  ReportSection s{"Layer shapes: time against output channels (tbd shapes)", {}};
  if (m.shapes.empty()) return ReportSection{s.title, {ReportNotAvailable{kNoShapesReason}}};
  size_t chart = 0;
  for (const auto& d : m.shapes) {
    s.parts.push_back(ReportSubheading{d.workload + " (" + d.file + ")"});
    s.parts.push_back(ReportParagraph{fmt::format(
        "Training time (forward + backward) per call of each layer shape alone, at its input in the model. "
        "Every layer pruned to {:.0f}% of its channels (Amdahl estimate of the step, {} now): {} naively, {} "
        "at the performance-aware counts.",
        100 * d.ratio, format_ms(d.step_s), format_ms(d.naive_step_s), format_ms(d.aware_step_s))});
    ReportTable t{{"layer", "input", "channels", "time at original", "share of step", "worst cliff"}, {}, "llrrrl"};
    for (const auto& l : d.layers) {
      double at_original = 0;
      for (const auto& p : l.curve)
        if (p.channels == l.original) at_original = p.mean_s;
      t.rows.push_back({l.name, l.input, std::to_string(l.original), format_ms(at_original), format_percent(l.share),
                        l.worst_cliff});
    }
    s.parts.push_back(t);
    for (size_t i = 0; i < d.layers.size(); ++i) s.parts.push_back(ReportChart{ReportChartKind::kShapes, chart++});
  }
  return s;
}

MaybeSection dispersion_analysis(const ReportModel& m) {
  ReportSection s{"Run-to-run dispersion of iteration times", {}};
  ReportTable t{{"configuration", "iterations", "median", "min", "p5", "p95", "max", "CV"}, {}, ""};
  for (const auto& r : m.runs) {
    if (r.times.empty()) continue;
    const double med = percentile(r.times, 0.5);
    const auto rel = [&](double q) { return format_signed_percent(percentile(r.times, q) / med - 1); };
    t.rows.push_back({r.label, std::to_string(r.times.size()), format_ms(med), rel(0), rel(0.05), rel(0.95), rel(1),
                      format_percent(r.cv)});
  }
  if (t.rows.empty()) return ReportSection{s.title, {ReportNotAvailable{kNoDispersionReason}}};
  s.parts.push_back(ReportParagraph{"Relative to each run's median iteration time."});
  s.parts.push_back(ReportChart{ReportChartKind::kDispersion});
  s.parts.push_back(t);
  return s;
}

MaybeSection ignored_files_analysis(const ReportModel& m) {
  if (m.skipped_files.empty()) return std::nullopt;
  std::string files;
  for (const auto& f : m.skipped_files) files += (files.empty() ? "" : ", ") + f;
  return ReportSection{"", {ReportParagraph{"Other JSON files in the folder (not tbd results, ignored): " + files}}};
}

}  // namespace

const std::vector<ReportAnalysis>& report_outline() {
  static const std::vector<ReportAnalysis> outline = {
      machines_analysis,        ab_comparison_analysis, runs_analysis,        findings_analysis,
      not_run_analysis,         sweeps_analysis,        gpu_analysis,         memory_at_peak_analysis,
      memory_timeline_analysis, phases_analysis,        roofline_analysis,    op_classes_analysis,
      layers_analysis,          scaling_analysis,       predictions_analysis, shapes_analysis,
      dispersion_analysis,      ignored_files_analysis,
  };
  return outline;
}

std::vector<ReportSection> report_sections(const ReportModel& model) {
  std::vector<ReportSection> sections;
  for (const auto analysis : report_outline())
    if (auto section = analysis(model)) sections.push_back(std::move(*section));
  return sections;
}

}  // namespace tbd
