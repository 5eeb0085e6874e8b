#include "tbd/report/report_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "tbd/core/error.h"
#include "tbd/measure/ops/layer_attribution.h"
#include "tbd/report/compare.h"
#include "tbd/report/findings.h"
#include "tbd/report/report_text.h"

namespace tbd {
namespace fs = std::filesystem;
namespace {

std::string relative_to(const std::string& file, const std::string& source) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return fs::path(file).filename().string();
  const auto rel = fs::relative(file, source, ec);
  return ec || rel.empty() ? file : rel.string();
}

double number_or_nan(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::string environment_line(const nlohmann::json& r) {
  if (!r.contains("environment")) return "environment not recorded";
  const auto& e = r["environment"];
  const auto text = [](const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  std::string cpu = e.contains("cpu") && e["cpu"].contains("model") ? text(e["cpu"]["model"]) : "unknown CPU";
  std::string cores = e.contains("cpu") && e["cpu"].contains("cores_available_to_process")
                          ? text(e["cpu"]["cores_available_to_process"]) + " cores available"
                          : "";
  std::string torch =
      e.contains("libtorch") && e["libtorch"].contains("version") ? "LibTorch " + text(e["libtorch"]["version"]) : "";
  std::string host = e.contains("os") && e["os"].contains("hostname") ? "host " + text(e["os"]["hostname"]) : "";
  std::string line = cpu;
  for (const auto& part : {cores, torch, host})
    if (!part.empty()) line += ", " + part;
  return line;
}

// The roofline section of a result, when its operators were judged.
RooflineView roofline_view(const nlohmann::json& r) {
  RooflineView v;
  if (!r.contains("roofline") || !r["roofline"].is_object() || !r["roofline"].contains("by_op") ||
      r["roofline"].contains("verdicts_not_available"))
    return v;
  const auto& rf = r["roofline"];
  const auto& c = rf.value("ceilings", nlohmann::json::object());
  v.peak_flops_per_s = c.contains("compute") ? number_or_nan(c["compute"], "flops_per_s") : NAN;
  v.bandwidth_bytes_per_s = c.contains("memory_bandwidth") ? number_or_nan(c["memory_bandwidth"], "bytes_per_s") : NAN;
  if (!std::isfinite(v.peak_flops_per_s) || !std::isfinite(v.bandwidth_bytes_per_s)) return v;
  for (const auto& u : rf["by_op"]) {
    if (!u.contains("bound") || !u["bound"].is_string()) continue;
    const double seconds = number_or_nan(u, "seconds");
    const std::string bound = u["bound"].get<std::string>();
    (bound == "compute" ? v.compute_s : bound == "memory" ? v.memory_s : v.overhead_s) += seconds;
    const double headroom = number_or_nan(u, "headroom_s");
    if (std::isfinite(headroom) && headroom > v.top_headroom_s)
      v.top_headroom_s = headroom, v.top_op = u.value("op", std::string()), v.top_bound = bound;
    const double intensity = u.contains("intensity") && u["intensity"].is_number() ? u["intensity"].get<double>() : 0;
    const double rate = number_or_nan(u, "achieved_flops_per_s");
    if (intensity > 0 && rate > 0) v.points.push_back({u.value("op", std::string()), intensity, rate, seconds});
  }
  v.judged = true;
  return v;
}

// The ops probe's per-layer self time, per iteration, with the roofline
// probe's bound (the one most of the layer's time has) and headroom.
std::vector<LayerTime> layers_of(const nlohmann::json& r) {
  std::vector<LayerTime> layers;
  if (!r.contains("ops") || !r["ops"].is_object() || !r["ops"].contains("by_layer")) return layers;
  const double n = std::max(1.0, r["ops"].value("iterations", 1.0));
  std::map<std::string, const nlohmann::json*> judged;
  if (r.contains("roofline") && r["roofline"].is_object() && r["roofline"].contains("by_layer") &&
      !r["roofline"].contains("verdicts_not_available"))
    for (const auto& l : r["roofline"]["by_layer"]) judged[l.value("layer", std::string())] = &l;
  for (const auto& l : r["ops"]["by_layer"]) {
    LayerTime t;
    t.layer = l.value("layer", std::string("?"));
    t.forward_ms = 1e3 * number_or_nan(l, "forward_self_s") / n;
    t.backward_ms = 1e3 * number_or_nan(l, "backward_self_s") / n;
    t.share = number_or_nan(l, "share_of_self");
    t.headroom_ms = NAN;
    if (const auto it = judged.find(t.layer); it != judged.end()) {
      t.bound = dominant_bound(it->second->value("seconds_by_bound", nlohmann::json::object())).first;
      t.headroom_ms = 1e3 * number_or_nan(*it->second, "headroom_s");
    }
    layers.push_back(t);
  }
  return layers;
}

MemoryTimeline memory_timeline_of(const nlohmann::json& r) {
  MemoryTimeline t;
  if (!r.contains("memory") || !r["memory"].is_object() || !r["memory"].contains("timeline")) return t;
  const auto& tl = r["memory"]["timeline"];
  if (!tl.contains("t_s") || !tl["t_s"].is_array() || !tl.contains("bytes")) return t;
  for (const auto& v : tl["t_s"]) t.t_s.push_back(v.is_number() ? v.get<double>() : NAN);
  for (const auto& c : memory_categories()) {
    std::vector<double> series(t.t_s.size(), 0.0);
    if (tl["bytes"].contains(c) && tl["bytes"][c].is_array())
      for (size_t i = 0; i < series.size() && i < tl["bytes"][c].size(); ++i)
        series[i] = tl["bytes"][c][i].is_number() ? tl["bytes"][c][i].get<double>() : 0.0;
    t.bytes.push_back(series);
  }
  return t;
}

void add_predictions(ReportModel& m, const LoadedDocument& doc, const std::string& source) {
  const std::string file = relative_to(doc.file, source);
  const std::string base_label = doc.doc.value("base_label", "?");
  const std::string workload = base_label.substr(0, base_label.find(' '));
  for (const auto& p : doc.doc["predictions"]) {
    PredictionRow row{base_label, workload, "", file, p.value("unit", std::string("samples/s"))};
    const std::string kind = p.value("kind", "");
    const auto& check = p.value("check", nlohmann::json::object());
    row.measured = row.error = NAN;
    if (kind == "data_parallel") {
      row.ranks = p.value("ranks", 0);
      row.what = fmt::format("{} data-parallel ranks", row.ranks);
      row.predicted = number_or_nan(p, "global_samples_per_s");
      row.speedup = number_or_nan(p, "speedup");
      row.measured = number_or_nan(check, "measured_global_samples_per_s");
      row.error = number_or_nan(check, "error");
    } else if (kind == "class_speedup") {
      for (const auto& c : p.value("classes", nlohmann::json::array()))
        row.what += (row.what.empty() ? "" : ", ") +
                    fmt::format("{} {:g}x faster", c.value("class", "?"), c.value("factor", 0.0));
      row.predicted = number_or_nan(p, "samples_per_s");
    } else if (kind == "roofline") {
      row.what = "every operator at its ceiling";
      row.predicted = number_or_nan(p, "samples_per_s");
    } else if (kind == "memory_limit") {
      row.what = "first batch of the doubling sequence over " + format_bytes(p.value("limit_bytes", -1LL));
      row.unit = "batch";
      row.predicted = number_or_nan(p, "first_out_of_memory_doubling");
      row.measured = number_or_nan(check, "measured_first_out_of_memory_batch");
      if (std::isfinite(row.measured) && row.measured > 0) row.error = row.predicted / row.measured - 1;
    } else {
      continue;
    }
    m.predictions.push_back(row);
  }
}

}  // namespace

AbView build_ab_view(const ResultSet& base, const ResultSet& candidate, const std::string& base_source,
                     const std::string& new_source) {
  const Comparison c = compare_results(base, candidate, CompareOptions{}, base_source, new_source);
  AbView v;
  v.base_source = base_source;
  v.new_source = new_source;
  for (const auto& r : c.runs) {
    const auto& s = r.stats;
    AbRow row{r.label, r.unit, r.verdict};
    row.base_throughput = s.base_seconds_per_sample > 0 ? 1 / s.base_seconds_per_sample : NAN;
    row.new_throughput = s.new_seconds_per_sample > 0 ? 1 / s.new_seconds_per_sample : NAN;
    row.ratio = s.ratio > 0 ? s.ratio : NAN;  // 0: a side had no timed repetition
    row.low = s.has_interval ? s.low : NAN;
    row.high = s.has_interval ? s.high : NAN;
    v.rows.push_back(row);
  }
  v.only_in_base = c.only_in_base;
  v.only_in_new = c.only_in_new;
  v.warnings = c.warnings;
  return v;
}

const std::vector<std::string>& memory_categories() {
  static const std::vector<std::string> c = {"weights",      "weight_gradients", "optimizer_state", "inputs",
                                             "feature_maps", "workspace",        "dynamic",         "other"};
  return c;
}

const std::vector<std::string>& report_phases() {
  static const std::vector<std::string> p = {"data", "forward", "backward", "communication", "optimizer", "other"};
  return p;
}

ReportModel build_report_model(const ResultSet& set, const std::string& source) {
  ReportModel m;
  m.source = source;
  if (set.runs.empty() && set.sweeps.empty() && set.suites.empty() && set.scales.empty() && set.predictions.empty())
    throw Error(source +
                ": no tbd results here (files with \"schema\": \"tbd.result/1\", tbd.scale/1, tbd.sweep/1 or "
                "tbd.suite/1); run tbd run --out, tbd sweep or tbd suite first");
  for (const auto& f : set.skipped) m.skipped_files.push_back(relative_to(f, source));
  std::set<std::string> environments;
  std::map<std::string, std::vector<const nlohmann::json*>> by_series;
  for (const auto& run : set.runs) {
    const auto& r = run.result;
    environments.insert(environment_line(r));
    if (!run.origin.empty()) continue;  // runs inside scale files appear in the scaling section
    ReportRun row;
    row.label = configuration_label(r);
    row.file = relative_to(run.file, source);
    row.workload = r["workload"]["name"].get<std::string>();
    row.unit = throughput_unit(r);
    row.batch = r["workload"]["options"].value("batch_size", 0LL);
    row.throughput = throughput_of(r);
    row.median_s = median_iteration_s(r);
    row.cv = r.contains("summary") ? number_or_nan(r["summary"], "cv") : NAN;
    row.ci_low = row.ci_high = NAN;
    if (r.contains("throughput") && r["throughput"].contains("ci95") && r["throughput"]["ci95"].is_array() &&
        r["throughput"]["ci95"].size() == 2 && r["throughput"]["ci95"][0].is_number() &&
        r["throughput"]["ci95"][1].is_number()) {
      // The CI of rank 0's throughput; a distributed run's global figure scales with it.
      const double scale = row.throughput / r["throughput"].value("samples_per_s", row.throughput);
      row.ci_low = scale * r["throughput"]["ci95"][0].get<double>();
      row.ci_high = scale * r["throughput"]["ci95"][1].get<double>();
    }
    row.cpu = cpu_utilisation(r);
    row.flops = flops_utilisation(r);
    row.peak_bytes = peak_memory_bytes(r);
    row.partial = r.value("partial", false);
    row.times = iteration_times(r);
    row.on_gpu = r["workload"]["options"].value("device", std::string("cpu")).rfind("cuda", 0) == 0;
    row.achieved_flops = r.contains("flops") ? number_or_nan(r["flops"], "achieved_flops_per_s") : NAN;
    row.gpu_util = r.contains("gpu") && r["gpu"].contains("utilization_gpu")
                       ? number_or_nan(r["gpu"]["utilization_gpu"], "mean")
                       : NAN;
    row.kernel_busy = r.contains("gpu") ? number_or_nan(r["gpu"], "kernel_busy_share") : NAN;
    row.device_median_s = r.contains("device_time") ? number_or_nan(r["device_time"], "median_s") : NAN;
    if (r.contains("memory") && r["memory"].contains("cuda_allocator")) {
      const auto& a = r["memory"]["cuda_allocator"];
      row.reserved_bytes = a.value("reserved_peak_bytes", -1LL);
      row.fragmentation = number_or_nan(a, "fragmentation");
    } else {
      row.fragmentation = NAN;
    }
    if (row.peak_bytes > 0 && r["memory"].contains("breakdown"))
      for (const auto& c : memory_categories()) row.memory.push_back({c, r["memory"]["breakdown"].value(c, 0LL)});
    if (r.contains("ops") && r["ops"].contains("by_class") && r["ops"]["by_class"].is_object())
      for (const auto& [cls, v] : r["ops"]["by_class"].items())
        row.op_classes.push_back({cls, number_or_nan(v, "share_of_self")});
    if (r.contains("phases") && r["phases"].is_object() && r["phases"].contains("iteration_ms"))
      for (const auto& p : report_phases())
        row.phases_ms.push_back({p, number_or_nan(r["phases"], (p + "_ms").c_str())});
    row.roofline = roofline_view(r);
    row.layers = layers_of(r);
    row.memory_timeline = memory_timeline_of(r);
    row.findings = findings_of(r);
    m.runs.push_back(row);
    by_series[configuration_key_without_batch(r)].push_back(&r);
  }
  std::sort(m.runs.begin(), m.runs.end(), [](const ReportRun& a, const ReportRun& b) {
    return std::tie(a.workload, a.batch, a.label) < std::tie(b.workload, b.batch, b.label);
  });
  for (const auto& [key, results] : by_series) {
    std::map<long long, const nlohmann::json*> by_batch;  // the last run of a batch size wins
    for (const auto* r : results) by_batch[(*r)["workload"]["options"].value("batch_size", 0LL)] = r;
    if (by_batch.size() < 2) continue;
    SweepSeries s;
    const auto& first = *by_batch.begin()->second;
    s.unit = throughput_unit(first);
    s.label = configuration_label(first);
    // The label without its batch part: "resnet50 tiny b4 fp32" -> "resnet50 tiny fp32".
    const std::string b = " b" + std::to_string(by_batch.begin()->first);
    if (auto pos = s.label.find(b + " "); pos != std::string::npos) s.label.erase(pos, b.size());
    for (const auto& [batch, r] : by_batch)
      s.points.push_back({batch, throughput_of(*r), cpu_utilisation(*r), flops_utilisation(*r), peak_memory_bytes(*r)});
    m.sweeps.push_back(s);
  }
  for (const auto& doc : set.sweeps) {
    SweepSummary s;
    s.file = relative_to(doc.file, source);
    s.workload = doc.doc.value("workload", "?");
    s.stopped_by = doc.doc.value("stopped_by", "");
    if (doc.doc.contains("largest_fitting_batch") && doc.doc["largest_fitting_batch"].is_number())
      s.largest_fit = doc.doc["largest_fitting_batch"].get<long long>();
    for (const auto& p : doc.doc["points"]) {
      const std::string status = p.value("status", "?");
      s.statuses.push_back({p.value("batch_size", 0LL), status});
      if (status != "ok")
        m.not_run.push_back({s.workload + " batch " + std::to_string(p.value("batch_size", 0LL)), status,
                             p.value("error", ""), s.file});
    }
    m.sweep_files.push_back(s);
  }
  for (const auto& doc : set.scales) {
    ScaleSeries s;
    s.file = relative_to(doc.file, source);
    s.unit = doc.doc.value("unit", "samples/s");
    s.label = s.workload = doc.doc.value("workload", "?");
    if (!doc.doc["points"].empty()) {
      const auto& r = doc.doc["points"][0]["result"];
      const auto& o = r["workload"]["options"];
      s.label += " " + o.value("scale", "?") + " b" + std::to_string(o.value("batch_size", 0LL)) + "/process";
    }
    for (const auto& p : doc.doc["points"])
      s.points.push_back({p["nproc"].get<int>(), number_or_nan(p, "samples_per_s"), number_or_nan(p, "speedup"),
                          number_or_nan(p, "efficiency")});
    m.scales.push_back(s);
  }
  for (const auto& doc : set.predictions) add_predictions(m, doc, source);
  for (const auto& doc : set.suites)
    for (const auto& r : doc.doc["runs"]) {
      const std::string status = r.value("status", "?");
      if (status != "ok")
        m.not_run.push_back({r.value("workload", "?"), status, r.value("error", ""), relative_to(doc.file, source)});
    }
  m.environments.assign(environments.begin(), environments.end());
  return m;
}

std::vector<std::string> gpu_table_header() {
  return {"configuration",    "FLOP/s",      "of peak",       "GPU util. (NVML)", "kernel busy",
          "device iteration", "peak memory", "reserved peak", "fragmentation"};
}

std::vector<std::vector<std::string>> gpu_table_rows(const ReportModel& model) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : model.runs) {
    if (!r.on_gpu) continue;
    rows.push_back({r.label, std::isnan(r.achieved_flops) ? "-" : format_number(r.achieved_flops / 1e12) + " T",
                    format_percent(r.flops), format_percent(r.gpu_util), format_percent(r.kernel_busy),
                    format_ms(r.device_median_s), format_bytes(r.peak_bytes), format_bytes(r.reserved_bytes),
                    format_percent(r.fragmentation)});
  }
  return rows;
}

std::vector<std::string> layer_table_header() {
  return {"layer", "forward ms", "backward ms", "share of operator time", "bound (roofline)", "headroom ms"};
}

std::vector<std::vector<std::string>> layer_table_rows(const ReportRun& run, size_t limit) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : run.layers) {
    if (rows.size() == limit && l.layer != kNoLayer) continue;  // the unattributed rest is always shown
    rows.push_back({l.layer, fmt::format("{:.3f}", l.forward_ms), fmt::format("{:.3f}", l.backward_ms),
                    format_percent(l.share), l.bound.empty() ? "-" : l.bound + "-bound",
                    std::isfinite(l.headroom_ms) ? fmt::format("{:.3f}", l.headroom_ms) : "-"});
  }
  return rows;
}

std::vector<std::string> prediction_table_header() {
  return {"base", "what", "predicted", "measured (--check)", "error", "file"};
}

std::vector<std::vector<std::string>> prediction_table_rows(const ReportModel& model) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : model.predictions) {
    const std::string unit = p.unit == "batch" ? "" : " " + p.unit;
    rows.push_back({p.base_label, p.what, format_number(p.predicted) + unit,
                    std::isfinite(p.measured) ? format_number(p.measured) + unit : "not checked",
                    format_signed_percent(p.error), p.file});
  }
  return rows;
}

std::vector<std::string> ab_table_header() {
  return {"configuration", "base", "new", "time per sample new/base", "95% CI", "verdict"};
}

std::vector<std::vector<std::string>> ab_table_rows(const AbView& ab) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : ab.rows)
    rows.push_back({r.label, format_number(r.base_throughput) + " " + r.unit + "/s",
                    format_number(r.new_throughput) + " " + r.unit + "/s",
                    std::isfinite(r.ratio) ? fmt::format("{:.3f}", r.ratio) : "-",
                    std::isfinite(r.low) ? fmt::format("[{:.3f}, {:.3f}]", r.low, r.high) : "-", r.verdict});
  return rows;
}

}  // namespace tbd
