// `tbd report --format html`: one self-contained file. Chart.js (embedded in
// the binary) is inlined, the data of every chart travels as JSON in the page,
// nothing is fetched when it is opened. The page records script errors and
// marks each chart it drew (data-rendered on the canvas, data-charts-* on the
// body), which is what the browser test reads.
#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

#include "tbd/core/statistics.h"
#include "tbd/report/assets.h"
#include "tbd/report/report_model.h"
#include "tbd/report/report_text.h"

namespace tbd {
namespace {

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                          "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};  // 12: one per operator class
const char* color(size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string json_for_script(const nlohmann::json& j) {
  // Invalid UTF-8 in a result file (a hand-edited name) becomes U+FFFD rather than an exception.
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    // These occur only inside JSON strings, where \uXXXX stands for the same character.
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (text.compare(i, 3, "\u2028") == 0 || text.compare(i, 3, "\u2029") == 0) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";  // line and paragraph separators, UTF-8 E2 80 A8/A9
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// NaN becomes null, which Chart.js leaves as a gap.
nlohmann::json value(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json axis_title(const std::string& text) { return {{"display", true}, {"text", text}}; }

class Page {
 public:
  void heading(int level, const std::string& text) { body_ << fmt::format("<h{0}>{1}</h{0}>\n", level, escape(text)); }
  void paragraph(const std::string& text) { body_ << "<p>" << escape(text) << "</p>\n"; }
  void not_available(const std::string& why) { body_ << "<p class=\"na\">Not available: " << escape(why) << ".</p>\n"; }
  void list(const std::vector<std::string>& items) {
    body_ << "<ul>";
    for (const auto& i : items) body_ << "<li>" << escape(i) << "</li>";
    body_ << "</ul>\n";
  }
  void chart(const std::string& caption, nlohmann::json config, int height = 320) {
    const std::string id = "chart-" + std::to_string(charts_.size() + 1);
    config["options"]["plugins"]["title"] = {{"display", true}, {"text", caption}};
    charts_.push_back({{"id", id}, {"config", config}});
    body_ << fmt::format(
        "<figure class=\"chart\" style=\"height:{}px\"><canvas id=\"{}\" role=\"img\" "
        "aria-label=\"{}\"></canvas></figure>\n",
        height, id, escape(caption));
  }
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
    body_ << "<table><thead><tr>";
    for (const auto& h : header) body_ << "<th>" << escape(h) << "</th>";
    body_ << "</tr></thead><tbody>\n";
    for (const auto& row : rows) {
      body_ << "<tr>";
      for (const auto& c : row) body_ << "<td>" << escape(c) << "</td>";
      body_ << "</tr>\n";
    }
    body_ << "</tbody></table>\n";
  }
  std::string html(const std::string& title) const;

 private:
  std::ostringstream body_;
  std::vector<nlohmann::json> charts_;
};

std::string Page::html(const std::string& title) const {
  std::string js(chart_js_source());
  // The source map is not shipped; without this line nothing even tries to fetch it.
  if (auto at = js.rfind("//# sourceMappingURL="); at != std::string::npos) js.erase(at);
  const std::string data = json_for_script(nlohmann::json(charts_));
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << escape(title)
      << "</title>\n<style>\n"
         "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}\n"
         "table{border-collapse:collapse;margin:1em 0;font-size:90%}th,td{border:1px solid #ccc;padding:.25em .6em;"
         "text-align:right}th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}\n"
         ".chart{position:relative;margin:1em 0}.na{color:#777;font-style:italic}\n"
         "#tbd-errors{color:#b00;white-space:pre-wrap}#tbd-errors:empty{display:none}\n"
         "</style>\n"
         "<script>\n"
         "window.tbdErrors = [];\n"
         "window.addEventListener('error', function (e) { window.tbdErrors.push(String(e.message || e)); });\n"
         "(function () { var original = console.error; console.error = function () {\n"
         "  window.tbdErrors.push(Array.prototype.join.call(arguments, ' ')); return original.apply(console, "
         "arguments); };\n"
         "})();\n"
         "</script>\n"
         "<script>\n/* Chart.js "
      << chart_js_version() << ", MIT licence, (c) Chart.js Contributors: https://www.chartjs.org */\n"
      << js << "\n</script>\n</head>\n<body>\n"
      << body_.str() << "<pre id=\"tbd-errors\"></pre>\n"
      << "<script type=\"application/json\" id=\"tbd-charts\">" << data << "</script>\n"
      << "<script>\n"
         "(function () {\n"
         "  var specs = JSON.parse(document.getElementById('tbd-charts').textContent), rendered = 0;\n"
         "  if (typeof Chart === 'undefined') { window.tbdErrors.push('Chart.js did not load'); specs = []; }\n"
         "  else { Chart.defaults.animation = false; Chart.defaults.maintainAspectRatio = false; }\n"
         "  specs.forEach(function (spec) {\n"
         "    var canvas = document.getElementById(spec.id);\n"
         "    try {\n"
         "      new Chart(canvas, spec.config);\n"
         "      // Drawn means: some pixel of the canvas is no longer transparent.\n"
         "      var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data, painted = "
         "false;\n"
         "      for (var i = 3; i < pixels.length && !painted; i += 4) painted = pixels[i] !== 0;\n"
         "      canvas.setAttribute('data-rendered', painted ? 'yes' : 'blank');\n"
         "      if (painted) rendered++; else window.tbdErrors.push(spec.id + ' drew nothing');\n"
         "    } catch (e) {\n"
         "      canvas.setAttribute('data-rendered', 'error');\n"
         "      window.tbdErrors.push(spec.id + ': ' + e.message);\n"
         "    }\n"
         "  });\n"
         "  document.body.setAttribute('data-charts-expected', String(specs.length));\n"
         "  document.body.setAttribute('data-charts-rendered', String(rendered));\n"
         "  document.body.setAttribute('data-errors', String(window.tbdErrors.length));\n"
         "  document.getElementById('tbd-errors').textContent = window.tbdErrors.join('\\n');\n"
         "})();\n"
         "</script>\n</body>\n</html>\n";
  return out.str();
}

nlohmann::json line_chart(const std::vector<std::string>& labels, const nlohmann::json& datasets, const std::string& x,
                          const std::string& y) {
  return {
      {"type", "line"},
      {"data", {{"labels", labels}, {"datasets", datasets}}},
      {"options",
       {{"scales", {{"x", {{"title", axis_title(x)}}}, {"y", {{"title", axis_title(y)}, {"beginAtZero", true}}}}}}}};
}

// Horizontal bars, one per run, stacked from the datasets (memory
// categories, phases, operator classes); `x_max` 0 leaves the axis free.
nlohmann::json stacked_bars(const std::vector<std::string>& labels, const nlohmann::json& datasets,
                            const std::string& x_title, double x_max = 0) {
  nlohmann::json x = {{"stacked", true}, {"title", axis_title(x_title)}};
  if (x_max > 0) x["max"] = x_max;
  return {{"type", "bar"},
          {"data", {{"labels", labels}, {"datasets", datasets}}},
          {"options", {{"indexAxis", "y"}, {"scales", {{"x", x}, {"y", {{"stacked", true}}}}}}}};
}

// Room for one bar per run.
int bars_height(size_t runs) { return 120 + 36 * static_cast<int>(runs); }

nlohmann::json dataset(const std::string& label, const nlohmann::json& data, size_t color_index) {
  return {{"label", label},
          {"data", data},
          {"borderColor", color(color_index)},
          {"backgroundColor", color(color_index)},
          {"spanGaps", true}};
}

bool any_finite(const nlohmann::json& data) {
  for (const auto& v : data)
    if (v.is_number()) return true;
  return false;
}

// Horizontal: per label a floating bar over an interval (null: none) and a
// point at the figure, the way error bars are drawn without a plugin.
nlohmann::json interval_chart(const std::vector<std::string>& labels, const nlohmann::json& intervals,
                              const std::string& interval_label, const nlohmann::json& points,
                              const std::string& point_label, const std::string& x_title) {
  return {{"type", "bar"},
          {"data",
           {{"labels", labels},
            {"datasets",
             {{{"type", "bar"},
               {"label", interval_label},
               {"data", intervals},
               {"backgroundColor", color(0)},
               {"barPercentage", 0.35}},
              {{"type", "line"},
               {"label", point_label},
               {"data", points},
               {"showLine", false},
               {"pointRadius", 5},
               {"pointStyle", "rectRot"},
               {"borderColor", color(1)},
               {"backgroundColor", color(1)}}}}}},
          {"options", {{"indexAxis", "y"}, {"scales", {{"x", {{"title", axis_title(x_title)}}}}}}}};
}

// Every run's throughput with its 95% CI over repetitions: a floating bar
// from the CI's low to high end and a point at the measured figure, on a
// logarithmic axis (the workloads' units differ by orders of magnitude).
void throughput_section(Page& page, const ReportModel& m) {
  std::vector<std::string> labels;
  nlohmann::json bars = nlohmann::json::array(), points = nlohmann::json::array();
  for (const auto& r : m.runs) {
    if (!(r.throughput > 0)) continue;
    labels.push_back(r.label + " (" + r.unit + ")");
    bars.push_back(std::isfinite(r.ci_low) && r.ci_low > 0 ? nlohmann::json({r.ci_low, r.ci_high})
                                                           : nlohmann::json(nullptr));
    points.push_back(r.throughput);
  }
  if (labels.empty()) return;
  nlohmann::json config = interval_chart(labels, bars, "95% CI over repetitions", points, "throughput",
                                         "samples/s in each workload's unit");
  config["options"]["scales"]["x"]["type"] = "logarithmic";
  page.chart("Throughput of every run, with its 95% confidence interval", config, bars_height(labels.size()));
}

void findings_section(Page& page, const ReportModel& m) {
  page.heading(2, "Findings");
  bool any = false;
  for (const auto& r : m.runs) {
    if (r.findings.empty()) continue;
    page.heading(3, r.label);
    page.list(r.findings);
    any = true;
  }
  if (!any) page.not_available("no result carries the figures findings are computed from");
}

// Live bytes by category over the instrumented iterations, stacked.
void memory_timeline_section(Page& page, const ReportModel& m) {
  page.heading(2, "Memory over an iteration");
  bool any = false;
  for (const auto& r : m.runs) {
    const auto& t = r.memory_timeline;
    if (t.t_s.size() < 2) continue;
    any = true;
    std::vector<std::string> labels;
    for (double x : t.t_s) labels.push_back(fmt::format("{:.1f}", 1e3 * x));
    nlohmann::json datasets = nlohmann::json::array();
    for (size_t c = 0; c < t.bytes.size(); ++c) {
      nlohmann::json data = nlohmann::json::array();
      bool nonzero = false;
      for (double b : t.bytes[c]) data.push_back(b / 1048576), nonzero |= b > 0;
      if (!nonzero) continue;
      datasets.push_back({{"label", memory_categories()[c]},
                          {"data", data},
                          {"fill", true},
                          {"pointRadius", 0},
                          {"borderColor", color(c)},
                          {"backgroundColor", color(c)}});
    }
    nlohmann::json config = line_chart(labels, datasets, "ms into the instrumented iterations", "MiB live");
    config["options"]["scales"]["y"]["stacked"] = true;
    page.chart("Memory timeline of " + r.label + " (memory probe)", config);
  }
  if (!any) page.not_available(kNoMemoryReason);
}

void predictions_section(Page& page, const ReportModel& m) {
  page.heading(2, "Predictions (tbd predict)");
  if (m.predictions.empty()) return page.not_available(kNoPredictionReason);
  page.table(prediction_table_header(), prediction_table_rows(m));
}

void ab_section(Page& page, const ReportModel& m) {
  if (!m.ab) return;
  const auto& ab = *m.ab;
  page.heading(2, "A/B: " + ab.new_source + " against " + ab.base_source);
  if (ab.rows.empty()) return page.not_available("no configuration is in both sets");
  std::vector<std::string> labels;
  nlohmann::json change = nlohmann::json::array(), interval = nlohmann::json::array();
  for (const auto& r : ab.rows) {
    labels.push_back(r.label);
    // Throughput change new/base − 1 (time per sample inverted), with the CI.
    change.push_back(value(100 * (1 / r.ratio - 1)));
    interval.push_back(std::isfinite(r.low) ? nlohmann::json({100 * (1 / r.high - 1), 100 * (1 / r.low - 1)})
                                            : nlohmann::json(nullptr));
  }
  const nlohmann::json config = interval_chart(labels, interval, "95% CI of the change", change, "throughput change",
                                               "% throughput, new against base");
  page.chart("Throughput change per configuration, new against base", config, bars_height(labels.size()));
  page.table(ab_table_header(), ab_table_rows(ab));
  for (const auto& w : ab.warnings) page.paragraph("Warning: " + w);
  if (!ab.only_in_base.empty() || !ab.only_in_new.empty())
    page.paragraph(fmt::format("Only in base: {}. Only in new: {}.", ab.only_in_base.size(), ab.only_in_new.size()));
}

void sweep_section(Page& page, const ReportModel& m) {
  page.heading(2, "Throughput and utilisation against batch size");
  if (m.sweeps.empty()) page.not_available(kNoSweepReason);
  for (const auto& s : m.sweeps) {
    page.heading(3, s.label);
    std::vector<std::string> labels;
    nlohmann::json throughput = nlohmann::json::array(), cpu = nlohmann::json::array(), flops = nlohmann::json::array(),
                   memory = nlohmann::json::array();
    for (const auto& p : s.points) {
      labels.push_back(std::to_string(p.batch));
      throughput.push_back(value(p.throughput));
      cpu.push_back(value(100 * p.cpu));
      flops.push_back(value(100 * p.flops));
      memory.push_back(p.peak_bytes >= 0 ? value(static_cast<double>(p.peak_bytes) / 1048576) : nullptr);
    }
    page.chart("Throughput of " + s.label,
               line_chart(labels, nlohmann::json::array({dataset("throughput", throughput, 0)}), "batch size", s.unit));
    nlohmann::json util = nlohmann::json::array();
    if (any_finite(cpu)) util.push_back(dataset("CPU utilisation (% of the threads' time)", cpu, 1));
    if (any_finite(flops)) util.push_back(dataset("FLOP/s (% of the measured peak)", flops, 2));
    if (util.empty())
      page.not_available("utilisation: these runs had neither the cpu nor the flops probe");
    else
      page.chart("Utilisation of " + s.label, line_chart(labels, util, "batch size", "%"));
    if (any_finite(memory))
      page.chart("Peak memory of " + s.label,
                 line_chart(labels, nlohmann::json::array({dataset("peak memory", memory, 3)}), "batch size", "MiB"));
  }
  for (const auto& s : m.sweep_files) {
    std::string tried;
    for (const auto& [b, status] : s.statuses) tried += (tried.empty() ? "" : ", ") + std::to_string(b) + " " + status;
    page.paragraph(fmt::format("Sweep of {} ({}): {}. Largest batch size that fits: {}{}.", s.workload, s.file, tried,
                               s.largest_fit > 0 ? std::to_string(s.largest_fit) : "none",
                               s.stopped_by.empty() ? "" : "; stopped: " + s.stopped_by));
  }
}

void memory_section(Page& page, const ReportModel& m) {
  page.heading(2, "Memory at the peak, by category");
  std::vector<std::string> labels;
  std::vector<const ReportRun*> runs;
  for (const auto& r : m.runs)
    if (!r.memory.empty()) labels.push_back(r.label), runs.push_back(&r);
  if (runs.empty()) return page.not_available(kNoMemoryReason);
  nlohmann::json datasets = nlohmann::json::array();
  for (size_t c = 0; c < memory_categories().size(); ++c) {
    nlohmann::json data = nlohmann::json::array();
    for (const auto* r : runs) data.push_back(static_cast<double>(r->memory[c].second) / 1048576);
    datasets.push_back({{"label", memory_categories()[c]}, {"data", data}, {"backgroundColor", color(c)}});
  }
  page.chart("Memory breakdown at the peak (categories sum to the peak)",
             stacked_bars(labels, datasets, "MiB at the peak of live bytes"), bars_height(runs.size()));
}

void phases_section(Page& page, const ReportModel& m) {
  page.heading(2, "Where an iteration's time goes");
  std::vector<std::string> labels;
  std::vector<const ReportRun*> runs;
  for (const auto& r : m.runs)
    if (!r.phases_ms.empty()) labels.push_back(r.label), runs.push_back(&r);
  if (runs.empty()) return page.not_available(kNoPhasesReason);
  nlohmann::json datasets = nlohmann::json::array();
  const auto& phases = report_phases();
  for (size_t p = 0; p < phases.size(); ++p) {
    nlohmann::json data = nlohmann::json::array();
    for (const auto* r : runs) data.push_back(value(r->phases_ms[p].second));
    datasets.push_back({{"label", phases[p]}, {"data", data}, {"backgroundColor", color(p)}});
  }
  page.chart("Phase times: data, forward, backward, communication, optimizer, other (sum: the mean iteration)",
             stacked_bars(labels, datasets, "ms per timed iteration (mean)"), bars_height(runs.size()));
}

// One chart per judged run: its FLOP units at (intensity, achieved FLOP/s)
// under the roofline min(peak, bandwidth x intensity), both axes logarithmic.
void roofline_section(Page& page, const ReportModel& m) {
  page.heading(2, "Roofline");
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m.runs) {
    const auto& v = r.roofline;
    if (!v.judged) continue;
    const double total = v.compute_s + v.memory_s + v.overhead_s;
    const auto share = [&](double s) { return format_percent(total > 0 ? s / total : NAN); };
    rows.push_back(
        {r.label, share(v.compute_s), share(v.memory_s), share(v.overhead_s),
         v.top_op.empty() ? "-" : v.top_op + " (" + v.top_bound + "-bound): " + format_ms(v.top_headroom_s)});
    if (v.points.empty()) continue;
    double lo = v.points.front().intensity, hi = lo;
    for (const auto& p : v.points) lo = std::min(lo, p.intensity), hi = std::max(hi, p.intensity);
    lo /= 4, hi *= 4;
    const double ridge = v.peak_flops_per_s / v.bandwidth_bytes_per_s;
    nlohmann::json roof = nlohmann::json::array();
    for (double x : {lo, std::clamp(ridge, lo, hi), hi})
      roof.push_back({{"x", x}, {"y", std::min(v.peak_flops_per_s, v.bandwidth_bytes_per_s * x)}});
    nlohmann::json points = nlohmann::json::array();
    // The y axis from below the slowest point to above the peak: a decade or more, as rooflines are drawn.
    double y_lo = std::min(v.peak_flops_per_s, v.bandwidth_bytes_per_s * lo);
    for (const auto& p : v.points) {
      points.push_back({{"x", p.intensity}, {"y", p.flops_per_s}, {"op", p.op}});
      y_lo = std::min(y_lo, p.flops_per_s);
    }
    y_lo = std::min(y_lo / 3, v.peak_flops_per_s / 10);
    nlohmann::json datasets = nlohmann::json::array({{{"type", "line"},
                                                      {"label", "roofline: min(peak, bandwidth x intensity)"},
                                                      {"data", roof},
                                                      {"borderColor", color(3)},
                                                      {"backgroundColor", color(3)},
                                                      {"pointRadius", 0}},
                                                     {{"type", "scatter"},
                                                      {"label", "operators with FLOPs (achieved)"},
                                                      {"data", points},
                                                      {"borderColor", color(0)},
                                                      {"backgroundColor", color(0)},
                                                      {"pointRadius", 5}}});
    nlohmann::json config = {
        {"type", "scatter"},
        {"data", {{"datasets", datasets}}},
        {"options",
         {{"scales",
           {{"x", {{"type", "logarithmic"}, {"title", axis_title("arithmetic intensity (FLOP/byte)")}}},
            {"y",
             {{"type", "logarithmic"},
              {"min", y_lo},
              {"max", 2 * v.peak_flops_per_s},
              {"title", axis_title("FLOP/s")}}}}}}}};
    page.chart("Roofline of " + r.label, config);
  }
  if (rows.empty()) return page.not_available(kNoRooflineReason);
  page.table({"configuration", "compute-bound", "memory-bound", "overhead-bound", "most headroom"}, rows);
}

void ops_section(Page& page, const ReportModel& m) {
  page.heading(2, "Time by operator class");
  std::vector<std::string> labels;
  std::vector<const ReportRun*> runs;
  for (const auto& r : m.runs)
    if (!r.op_classes.empty()) labels.push_back(r.label), runs.push_back(&r);
  if (runs.empty()) return page.not_available(kNoOpsReason);
  std::vector<std::string> classes;
  for (const auto& [c, share] : runs.front()->op_classes) classes.push_back(c);
  nlohmann::json datasets = nlohmann::json::array();
  for (size_t c = 0; c < classes.size(); ++c) {
    nlohmann::json data = nlohmann::json::array();
    bool any = false;
    for (const auto* r : runs) {
      double share = NAN;
      for (const auto& [name, s] : r->op_classes)
        if (name == classes[c]) share = s;
      any |= std::isfinite(share) && share > 0;
      data.push_back(value(100 * share));
    }
    if (any) datasets.push_back({{"label", classes[c]}, {"data", data}, {"backgroundColor", color(c)}});
  }
  page.chart("Operator self time by class (ops probe)", stacked_bars(labels, datasets, "% of operator self time", 100),
             bars_height(runs.size()));
}

// Per run: each layer's forward and backward self time as a stacked bar,
// then the table with the roofline's verdict per layer.
void layers_section(Page& page, const ReportModel& m) {
  page.heading(2, "Time by layer");
  bool any = false;
  for (const auto& r : m.runs) {
    if (r.layers.empty()) continue;
    any = true;
    std::vector<std::string> labels;
    nlohmann::json forward = nlohmann::json::array(), backward = nlohmann::json::array();
    for (const auto& l : r.layers) {
      if (labels.size() == 12) break;
      labels.push_back(l.layer);
      forward.push_back(value(l.forward_ms));
      backward.push_back(value(l.backward_ms));
    }
    const nlohmann::json datasets = {{{"label", "forward"}, {"data", forward}, {"backgroundColor", color(0)}},
                                     {{"label", "backward"}, {"data", backward}, {"backgroundColor", color(1)}}};
    page.chart("Operator self time by layer: " + r.label,
               stacked_bars(labels, datasets, "ms per instrumented iteration"), bars_height(labels.size()));
    page.table(layer_table_header(), layer_table_rows(r));
  }
  if (!any) page.not_available(kNoLayersReason);
}

void scaling_section(Page& page, const ReportModel& m) {
  page.heading(2, "Scaling efficiency against process count");
  if (m.scales.empty()) return page.not_available(kNoScaleReason);
  std::set<int> counts;
  for (const auto& s : m.scales)
    for (const auto& p : s.points) counts.insert(p.nproc);
  std::vector<std::string> labels;
  for (int n : counts) labels.push_back(std::to_string(n));
  nlohmann::json efficiency = nlohmann::json::array(), speedup = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < m.scales.size(); ++i) {
    const auto& s = m.scales[i];
    nlohmann::json e = nlohmann::json::array(), u = nlohmann::json::array();
    for (int n : counts) {
      nlohmann::json ev = nullptr, uv = nullptr;
      for (const auto& p : s.points)
        if (p.nproc == n) ev = value(100 * p.efficiency), uv = value(p.speedup);
      e.push_back(ev);
      u.push_back(uv);
    }
    efficiency.push_back(dataset(s.label, e, i));
    speedup.push_back(dataset(s.label, u, i));
    for (const auto& p : s.points)
      rows.push_back({s.label, std::to_string(p.nproc), format_number(p.throughput) + " " + s.unit,
                      fmt::format("{:.3f}", p.speedup), format_percent(p.efficiency)});
  }
  // Predictions for these workloads beside the measurement (against their single-process base).
  for (const auto& pr : m.predictions) {
    if (pr.ranks < 2 || !counts.count(pr.ranks)) continue;
    bool scaled = false;
    for (const auto& s : m.scales) scaled |= s.workload == pr.workload;
    if (!scaled) continue;
    nlohmann::json e = nlohmann::json::array(), u = nlohmann::json::array();
    for (int n : counts) {
      e.push_back(n == pr.ranks ? value(100 * pr.speedup / n) : nlohmann::json(nullptr));
      u.push_back(n == pr.ranks ? value(pr.speedup) : nlohmann::json(nullptr));
    }
    auto styled = [&](nlohmann::json d) {
      d["pointStyle"] = "triangle", d["pointRadius"] = 7, d["showLine"] = false;
      return d;
    };
    efficiency.push_back(styled(dataset("predicted: " + pr.base_label, e, 6)));
    speedup.push_back(styled(dataset("predicted: " + pr.base_label, u, 6)));
  }
  // Ideal: efficiency 100%, speed-up n / first count.
  nlohmann::json ideal_e = nlohmann::json::array(), ideal_u = nlohmann::json::array();
  for (int n : counts) ideal_e.push_back(100.0), ideal_u.push_back(static_cast<double>(n) / *counts.begin());
  auto dashed = [](nlohmann::json d) {
    d["borderDash"] = {6, 4}, d["pointRadius"] = 0;
    return d;
  };
  efficiency.push_back(dashed(dataset("ideal", ideal_e, 9)));
  speedup.push_back(dashed(dataset("ideal (linear)", ideal_u, 9)));
  page.chart("Scaling efficiency: throughput(n) / (n · throughput(first count))",
             line_chart(labels, efficiency, "processes", "efficiency (%)"));
  page.chart("Speed-up against the first process count", line_chart(labels, speedup, "processes", "speed-up"));
  page.table({"configuration", "processes", "throughput", "speed-up", "efficiency"}, rows);
}

void dispersion_section(Page& page, const ReportModel& m) {
  page.heading(2, "Run-to-run dispersion of iteration times");
  std::vector<std::string> labels;
  nlohmann::json band = nlohmann::json::array(), lows = nlohmann::json::array(), highs = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m.runs) {
    if (r.times.empty()) continue;
    const double med = percentile(r.times, 0.5);
    const auto rel = [&](double q) { return 100 * (percentile(r.times, q) / med - 1); };
    labels.push_back(r.label);
    band.push_back({rel(0.05), rel(0.95)});
    lows.push_back(rel(0));
    highs.push_back(rel(1));
    rows.push_back({r.label, std::to_string(r.times.size()), format_ms(med), format_signed_percent(rel(0) / 100),
                    format_signed_percent(rel(0.05) / 100), format_signed_percent(rel(0.95) / 100),
                    format_signed_percent(rel(1) / 100), format_percent(r.cv)});
  }
  if (labels.empty()) return page.not_available("no result file with measured iterations");
  nlohmann::json config = {
      {"type", "bar"},
      {"data",
       {{"labels", labels},
        {"datasets",
         {{{"type", "bar"}, {"label", "p5 to p95"}, {"data", band}, {"backgroundColor", color(0)}},
          {{"type", "line"},
           {"label", "fastest"},
           {"data", lows},
           {"showLine", false},
           {"pointStyle", "triangle"},
           {"pointRadius", 5},
           {"borderColor", color(4)},
           {"backgroundColor", color(4)}},
          {{"type", "line"},
           {"label", "slowest"},
           {"data", highs},
           {"showLine", false},
           {"pointStyle", "rectRot"},
           {"pointRadius", 5},
           {"borderColor", color(2)},
           {"backgroundColor", color(2)}}}}}},
      {"options", {{"scales", {{"y", {{"title", axis_title("% from the run's median iteration time")}}}}}}}};
  page.chart("Iteration times relative to each run's median", config, 360);
  page.table({"configuration", "iterations", "median", "min", "p5", "p95", "max", "CV"}, rows);
}

}  // namespace

std::string render_html(const ReportModel& m) {
  Page page;
  page.heading(1, "tbd report: " + m.source);
  std::string machines;
  for (const auto& e : m.environments) machines += (machines.empty() ? "" : "; ") + e;
  page.paragraph("Machines: " + (machines.empty() ? std::string("not recorded") : machines) + ".");
  ab_section(page, m);
  page.heading(2, "Runs");
  if (m.runs.empty()) {
    page.not_available("no result files in this folder (only scaling files or indexes)");
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : m.runs)
      rows.push_back({r.label + (r.partial ? " (partial)" : ""), format_number(r.throughput) + " " + r.unit,
                      format_ms(r.median_s), format_percent(r.cv), format_percent(r.cpu), format_percent(r.flops),
                      format_bytes(r.peak_bytes), r.file});
    page.table(
        {"configuration", "throughput", "median iteration", "CV", "CPU util.", "FLOP/s of peak", "peak memory", "file"},
        rows);
    throughput_section(page, m);
  }
  findings_section(page, m);
  if (!m.not_run.empty()) {
    page.heading(2, "Failed, out-of-memory and skipped runs");
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : m.not_run) rows.push_back({n.what, n.status, n.error, n.file});
    page.table({"run", "status", "error", "recorded in"}, rows);
  }
  sweep_section(page, m);
  page.heading(2, "GPU: FLOP/s, utilisation, kernels and the caching allocator");
  if (const auto rows = gpu_table_rows(m); rows.empty())
    page.not_available(kNoGpuReason);
  else
    page.table(gpu_table_header(), rows);
  memory_section(page, m);
  memory_timeline_section(page, m);
  phases_section(page, m);
  roofline_section(page, m);
  ops_section(page, m);
  layers_section(page, m);
  scaling_section(page, m);
  predictions_section(page, m);
  dispersion_section(page, m);
  page.paragraph("Charts by Chart.js " + std::string(chart_js_version()) +
                 " (MIT licence), inlined: this file needs no network.");
  return page.html("tbd report: " + m.source);
}

}  // namespace tbd
