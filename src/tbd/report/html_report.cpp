// `tbd report --format html`: the report's outline (report_outline) as one
// self-contained file, each table with its chart. Chart.js (embedded in
// the binary) is inlined, the data of every chart travels as JSON in the page,
// nothing is fetched when it is opened. The page records script errors and
// marks each chart it drew (data-rendered on the canvas, data-charts-* on the
// body), which is what the browser test reads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <variant>

#include "tbd/core/statistics.h"
#include "tbd/report/assets.h"
#include "tbd/report/report_model.h"
#include "tbd/report/report_outline.h"

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
void throughput_chart(Page& page, const ReportModel& m) {
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

void ab_change_chart(Page& page, const ReportModel& m) {
  std::vector<std::string> labels;
  nlohmann::json change = nlohmann::json::array(), interval = nlohmann::json::array();
  for (const auto& r : m.ab->rows) {
    labels.push_back(r.label);
    // Throughput change new/base − 1 (time per sample inverted), with the CI.
    change.push_back(value(100 * (1 / r.ratio - 1)));
    interval.push_back(std::isfinite(r.low) ? nlohmann::json({100 * (1 / r.high - 1), 100 * (1 / r.low - 1)})
                                            : nlohmann::json(nullptr));
  }
  const nlohmann::json config = interval_chart(labels, interval, "95% CI of the change", change, "throughput change",
                                               "% throughput, new against base");
  page.chart("Throughput change per configuration, new against base", config, bars_height(labels.size()));
}

void sweep_charts(Page& page, const SweepSeries& s) {
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

// One stacked bar per run that has the figures (`has`): a dataset per
// series name, `figure(run, k)` its value for series k. `x_max` as in
// stacked_bars; `drop_empty` leaves out series that are zero or absent in
// every run (operator classes a workload never calls).
template <typename Has, typename Figure>
void stacked_runs_chart(Page& page, const ReportModel& m, const std::string& caption, const std::string& x_title,
                        const std::vector<std::string>& series, Has has, Figure figure, double x_max = 0,
                        bool drop_empty = false) {
  std::vector<std::string> labels;
  std::vector<const ReportRun*> runs;
  for (const auto& r : m.runs)
    if (has(r)) labels.push_back(r.label), runs.push_back(&r);
  if (runs.empty()) return;
  nlohmann::json datasets = nlohmann::json::array();
  for (size_t k = 0; k < series.size(); ++k) {
    nlohmann::json data = nlohmann::json::array();
    bool any = false;
    for (const auto* r : runs) {
      const double v = figure(*r, k);
      any |= std::isfinite(v) && v > 0;
      data.push_back(value(v));
    }
    if (any || !drop_empty) datasets.push_back({{"label", series[k]}, {"data", data}, {"backgroundColor", color(k)}});
  }
  page.chart(caption, stacked_bars(labels, datasets, x_title, x_max), bars_height(runs.size()));
}

void memory_at_peak_chart(Page& page, const ReportModel& m) {
  stacked_runs_chart(
      page, m, "Memory breakdown at the peak (categories sum to the peak)", "MiB at the peak of live bytes",
      memory_categories(), [](const ReportRun& r) { return !r.memory.empty(); },
      [](const ReportRun& r, size_t c) { return static_cast<double>(r.memory[c].second) / 1048576; });
}

void phases_chart(Page& page, const ReportModel& m) {
  stacked_runs_chart(
      page, m, "Phase times: data, forward, backward, communication, optimizer, other (sum: the mean iteration)",
      "ms per timed iteration (mean)", report_phases(), [](const ReportRun& r) { return !r.phases_ms.empty(); },
      [](const ReportRun& r, size_t p) { return r.phases_ms[p].second; });
}

void op_classes_chart(Page& page, const ReportModel& m) {
  std::vector<std::string> classes;
  for (const auto& r : m.runs)
    if (!r.op_classes.empty() && classes.empty())
      for (const auto& [c, share] : r.op_classes) classes.push_back(c);
  stacked_runs_chart(
      page, m, "Operator self time by class (ops probe)", "% of operator self time", classes,
      [](const ReportRun& r) { return !r.op_classes.empty(); },
      [&](const ReportRun& r, size_t c) {
        double share = NAN;
        for (const auto& [name, s] : r.op_classes)
          if (name == classes[c]) share = s;
        return 100 * share;
      },
      100, true);
}

// Live bytes by category over the instrumented iterations, stacked.
void memory_timeline_chart(Page& page, const ReportRun& r) {
  const auto& t = r.memory_timeline;
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

// A run's FLOP units at (intensity, achieved FLOP/s) under the roofline
// min(peak, bandwidth x intensity), both axes logarithmic.
void roofline_chart(Page& page, const ReportRun& r) {
  const auto& v = r.roofline;
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

// Each of a run's largest layers: forward and backward self time, stacked.
void layers_chart(Page& page, const ReportRun& r) {
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
  page.chart("Operator self time by layer: " + r.label, stacked_bars(labels, datasets, "ms per instrumented iteration"),
             bars_height(labels.size()));
}

// Efficiency (or speed-up) of every scale file against the process count,
// the predictions for those workloads beside them and the ideal line.
void scaling_chart(Page& page, const ReportModel& m, bool efficiency) {
  std::set<int> counts;
  for (const auto& s : m.scales)
    for (const auto& p : s.points) counts.insert(p.nproc);
  std::vector<std::string> labels;
  for (int n : counts) labels.push_back(std::to_string(n));
  const auto figure = [&](double speedup, int n) { return efficiency ? value(100 * speedup / n) : value(speedup); };
  nlohmann::json datasets = nlohmann::json::array();
  for (size_t i = 0; i < m.scales.size(); ++i) {
    const auto& s = m.scales[i];
    nlohmann::json data = nlohmann::json::array();
    for (int n : counts) {
      nlohmann::json v = nullptr;
      for (const auto& p : s.points)
        if (p.nproc == n) v = efficiency ? value(100 * p.efficiency) : value(p.speedup);
      data.push_back(v);
    }
    datasets.push_back(dataset(s.label, data, i));
  }
  // Predictions for these workloads beside the measurement (against their single-process base).
  for (const auto& pr : m.predictions) {
    if (pr.ranks < 2 || !counts.count(pr.ranks)) continue;
    bool scaled = false;
    for (const auto& s : m.scales) scaled |= s.workload == pr.workload;
    if (!scaled) continue;
    nlohmann::json data = nlohmann::json::array();
    for (int n : counts) data.push_back(n == pr.ranks ? figure(pr.speedup, n) : nlohmann::json(nullptr));
    nlohmann::json d = dataset("predicted: " + pr.base_label, data, 6);
    d["pointStyle"] = "triangle", d["pointRadius"] = 7, d["showLine"] = false;
    datasets.push_back(d);
  }
  // Ideal: efficiency 100%, speed-up n / first count.
  nlohmann::json ideal = nlohmann::json::array();
  for (int n : counts) ideal.push_back(efficiency ? 100.0 : static_cast<double>(n) / *counts.begin());
  nlohmann::json d = dataset(efficiency ? "ideal" : "ideal (linear)", ideal, 9);
  d["borderDash"] = {6, 4}, d["pointRadius"] = 0;
  datasets.push_back(d);
  if (efficiency)
    page.chart("Scaling efficiency: throughput(n) / (n · throughput(first count))",
               line_chart(labels, datasets, "processes", "efficiency (%)"));
  else
    page.chart("Speed-up against the first process count", line_chart(labels, datasets, "processes", "speed-up"));
}

void dispersion_chart(Page& page, const ReportModel& m) {
  std::vector<std::string> labels;
  nlohmann::json band = nlohmann::json::array(), lows = nlohmann::json::array(), highs = nlohmann::json::array();
  for (const auto& r : m.runs) {
    if (r.times.empty()) continue;
    const double med = percentile(r.times, 0.5);
    const auto rel = [&](double q) { return 100 * (percentile(r.times, q) / med - 1); };
    labels.push_back(r.label);
    band.push_back({rel(0.05), rel(0.95)});
    lows.push_back(rel(0));
    highs.push_back(rel(1));
  }
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
}

// One layer shape: training time against output channels, its 95% interval
// as a band, the cliffs and the performance-aware counts as marked points.
void shapes_chart(Page& page, const ReportModel& m, size_t index) {
  const ShapesLayer* layer = nullptr;
  for (const auto& d : m.shapes) {
    if (index < d.layers.size()) {
      layer = &d.layers[index];
      break;
    }
    index -= d.layers.size();
  }
  if (!layer) return;
  std::vector<std::string> labels;
  nlohmann::json mean = nlohmann::json::array(), low = nlohmann::json::array(), high = nlohmann::json::array(),
                 cliffs = nlohmann::json::array(), aware = nlohmann::json::array();
  for (const auto& p : layer->curve) {
    labels.push_back(std::to_string(p.channels));
    mean.push_back(1e3 * p.mean_s);
    low.push_back(1e3 * p.ci_low_s);
    high.push_back(1e3 * p.ci_high_s);
    cliffs.push_back(p.cliff ? nlohmann::json(1e3 * p.mean_s) : nlohmann::json(nullptr));
    aware.push_back(p.aware ? nlohmann::json(1e3 * p.mean_s) : nlohmann::json(nullptr));
  }
  const auto marks = [](const std::string& label, const nlohmann::json& data, size_t c, const char* style) {
    nlohmann::json d = dataset(label, data, c);
    d.update({{"showLine", false}, {"pointRadius", 6}, {"pointStyle", style}, {"spanGaps", false}});
    return d;
  };
  nlohmann::json band_low = dataset("95% CI", low, 7), band_high = dataset("95% CI high", high, 7);
  band_low.update({{"pointRadius", 0}, {"borderWidth", 1}});
  band_high.update({{"pointRadius", 0}, {"borderWidth", 1}, {"fill", "-1"}});
  const nlohmann::json datasets = {dataset("training time", mean, 0), band_low, band_high,
                                   marks("cliff", cliffs, 2, "triangle"),
                                   marks("performance-aware", aware, 4, "rectRot")};
  page.chart(layer->name + ": " + layer->input + ", " + std::to_string(layer->original) + " channels in the model",
             line_chart(labels, datasets, "output channels", "ms per call"));
}

void draw_chart(Page& page, const ReportModel& m, const ReportChart& c) {
  switch (c.kind) {
    case ReportChartKind::kThroughput: return throughput_chart(page, m);
    case ReportChartKind::kAbChange: return ab_change_chart(page, m);
    case ReportChartKind::kSweep: return sweep_charts(page, m.sweeps[c.index]);
    case ReportChartKind::kMemoryAtPeak: return memory_at_peak_chart(page, m);
    case ReportChartKind::kMemoryTimeline: return memory_timeline_chart(page, m.runs[c.index]);
    case ReportChartKind::kPhases: return phases_chart(page, m);
    case ReportChartKind::kRoofline: return roofline_chart(page, m.runs[c.index]);
    case ReportChartKind::kOpClasses: return op_classes_chart(page, m);
    case ReportChartKind::kLayers: return layers_chart(page, m.runs[c.index]);
    case ReportChartKind::kScalingEfficiency: return scaling_chart(page, m, true);
    case ReportChartKind::kScalingSpeedup: return scaling_chart(page, m, false);
    case ReportChartKind::kDispersion: return dispersion_chart(page, m);
    case ReportChartKind::kShapes: return shapes_chart(page, m, c.index);
  }
}

void html_part(Page& page, const ReportModel& m, const ReportPart& part) {
  if (const auto* h = std::get_if<ReportSubheading>(&part))
    page.heading(3, h->text);
  else if (const auto* p = std::get_if<ReportParagraph>(&part))
    page.paragraph(p->text);
  else if (const auto* l = std::get_if<ReportList>(&part))
    page.list(l->items);
  else if (const auto* t = std::get_if<ReportTable>(&part))
    page.table(t->header, t->rows);
  else if (const auto* c = std::get_if<ReportChart>(&part))
    draw_chart(page, m, *c);
  else if (const auto* n = std::get_if<ReportNotAvailable>(&part))
    page.not_available(n->reason);
}

}  // namespace

std::string render_html(const ReportModel& m) {
  Page page;
  page.heading(1, "tbd report: " + m.source);
  for (const auto& section : report_sections(m)) {
    if (!section.title.empty()) page.heading(2, section.title);
    for (const auto& part : section.parts) html_part(page, m, part);
  }
  page.paragraph("Charts by Chart.js " + std::string(chart_js_version()) +
                 " (MIT licence), inlined: this file needs no network.");
  return page.html("tbd report: " + m.source);
}

}  // namespace tbd
