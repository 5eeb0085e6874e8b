#include "tbd/report/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tbd/core/number_format.h"
#include "tbd/measure/ops/layer_attribution.h"
#include "tbd/report/json_fields.h"

namespace tbd {
namespace {

double number(const nlohmann::json& j, const char* key) { return fields::number_or_nan(j, {key}); }

// A probe's section, or an empty object where it is absent or says why it is not available.
const nlohmann::json& section(const nlohmann::json& r, const char* key) {
  static const nlohmann::json none = nlohmann::json::object();
  const auto& s = fields::object(r, {key});
  return fields::find(s, {"not_available"}) ? none : s;
}

std::string percent(double share) { return fmt::format("{:.0f}%", 100 * share); }

// "backward 62% and forward 31% of the 2.50 s iteration"
void phases_finding(const nlohmann::json& r, std::vector<std::string>& out) {
  const auto& p = section(r, "phases");
  const double total = number(p, "iteration_ms");
  if (!(total > 0)) return;
  std::vector<std::pair<double, std::string>> parts;
  for (const char* phase : {"data", "forward", "backward", "communication", "optimizer", "other"}) {
    const double ms = number(p, (std::string(phase) + "_ms").c_str());
    if (ms > 0) parts.push_back({ms, phase});
  }
  std::sort(parts.rbegin(), parts.rend());
  if (parts.size() < 2) return;
  out.push_back(fmt::format("Time: {} {} and {} {} of the {} iteration.", parts[0].second,
                            percent(parts[0].first / total), parts[1].second, percent(parts[1].first / total),
                            format_ms(total / 1e3)));
}

// "compute-bound: 91% of operator time; gemm takes 65% at 94% of the compute ceiling"
void roofline_finding(const nlohmann::json& r, std::vector<std::string>& out) {
  const auto& rf = section(r, "roofline");
  if (!rf.contains("by_class") || rf.contains("verdicts_not_available")) return;
  double by_bound[3] = {0, 0, 0}, total = 0;
  std::string top_class;
  double top_seconds = 0;
  for (const auto& [cls, c] : rf["by_class"].items()) {
    const auto& b = c.value("seconds_by_bound", nlohmann::json::object());
    by_bound[0] += std::isfinite(number(b, "compute")) ? number(b, "compute") : 0;
    by_bound[1] += std::isfinite(number(b, "memory")) ? number(b, "memory") : 0;
    by_bound[2] += std::isfinite(number(b, "overhead")) ? number(b, "overhead") : 0;
    const double s = number(c, "seconds");
    if (s > top_seconds) top_seconds = s, top_class = cls;
  }
  total = by_bound[0] + by_bound[1] + by_bound[2];
  if (!(total > 0) || top_class.empty()) return;
  const char* names[3] = {"compute-bound", "memory-bound", "overhead-bound"};
  const int dominant = static_cast<int>(std::max_element(by_bound, by_bound + 3) - by_bound);
  const auto& c = rf["by_class"][top_class];
  const auto& ceilings = rf.value("ceilings", nlohmann::json::object());
  const double peak = number(ceilings.value("compute", nlohmann::json::object()), "flops_per_s");
  const double bandwidth = number(ceilings.value("memory_bandwidth", nlohmann::json::object()), "bytes_per_s");
  std::string where;
  const double flops = number(c, "achieved_flops_per_s"), bytes = number(c, "achieved_bytes_per_s");
  if (flops > 0 && peak > 0)
    where = fmt::format(" at {} of the compute ceiling", percent(flops / peak));
  else if (bytes > 0 && bandwidth > 0)
    where = fmt::format(" at {} of the bandwidth ceiling", percent(bytes / bandwidth));
  out.push_back(fmt::format("{}: {} of operator time; {} operators take {} of it{}.", names[dominant],
                            percent(by_bound[dominant] / total), top_class, percent(top_seconds / total), where));
  if (rf.contains("by_op") && rf["by_op"].is_array() && !rf["by_op"].empty()) {
    const auto& top = rf["by_op"][0];  // sorted by headroom
    const double headroom = number(top, "headroom_s");
    if (headroom > 0)
      out.push_back(fmt::format("Most headroom: {} ({}-bound) would save {} per iteration at its ceiling.",
                                top.value("op", std::string("?")), top.value("bound", std::string("?")),
                                format_ms(headroom)));
  }
}

// "Layers: layer3 takes 41% of operator time (backward 2.1x its forward), mostly compute-bound"
void layer_finding(const nlohmann::json& r, std::vector<std::string>& out) {
  const auto& ops = section(r, "ops");
  if (!ops.contains("by_layer") || !ops["by_layer"].is_array()) return;
  const nlohmann::json* top = nullptr;
  int named = 0;
  for (const auto& l : ops["by_layer"]) {
    if (l.value("layer", std::string()) == kNoLayer) continue;
    ++named;
    if (!top || number(l, "self_s") > number(*top, "self_s")) top = &l;
  }
  if (!top || named < 2) return;
  const std::string name = top->value("layer", std::string("?"));
  std::string text = fmt::format("Layers: {} takes {} of operator time", name, percent(number(*top, "share_of_self")));
  const double forward = number(*top, "forward_self_s"), backward = number(*top, "backward_self_s");
  if (forward > 0 && backward > 0) text += fmt::format(" (backward {:.1f}x its forward)", backward / forward);
  const auto& rf = section(r, "roofline");
  if (rf.contains("by_layer") && !rf.contains("verdicts_not_available"))
    for (const auto& l : rf["by_layer"])
      if (l.value("layer", std::string()) == name) {
        const auto [bound, share] = dominant_bound(l.value("seconds_by_bound", nlohmann::json::object()));
        if (!bound.empty()) text += fmt::format(", {} {}-bound", percent(share), bound);
      }
  out.push_back(text + ".");
}

void memory_finding(const nlohmann::json& r, std::vector<std::string>& out) {
  const auto& m = section(r, "memory");
  const double peak = number(m, "peak_bytes");
  if (!(peak > 0) || !m.contains("breakdown")) return;
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [cat, v] : m["breakdown"].items())
    if (v.is_number() && v.get<double>() > 0) parts.push_back({v.get<double>(), cat});
  std::sort(parts.rbegin(), parts.rend());
  if (parts.empty()) return;
  std::string text =
      fmt::format("Memory: peak {}, {} {}", format_bytes(peak), parts[0].second, percent(parts[0].first / peak));
  if (parts.size() > 1) text += fmt::format(", {} {}", parts[1].second, percent(parts[1].first / peak));
  out.push_back(text + ".");
}

void pipeline_and_comm_findings(const nlohmann::json& r, std::vector<std::string>& out) {
  const double stall = number(section(r, "data"), "stall_share");
  if (stall > 0.05)
    out.push_back(
        fmt::format("Input-bound: {} of the step waits for the next batch; add --data-workers.", percent(stall)));
  const auto& c = section(r, "comm");
  const double exposed = number(c, "exposed_wait_s_mean"), hidden = number(c, "hidden_share");
  const double iteration = number(section(r, "summary"), "mean_s");
  if (exposed >= 0 && iteration > 0)
    out.push_back(
        fmt::format("Communication: {} exposed per iteration ({} of it), {} of its time hidden under "
                    "computation.",
                    format_ms(exposed), percent(exposed / iteration), percent(hidden)));
  if (c.contains("all_to_all")) {
    const double lookups = number(c["all_to_all"], "exposed_wait_s_mean");
    if (lookups >= 0 && iteration > 0)
      out.push_back(
          fmt::format("Embedding all-to-alls: {} per iteration ({} of it), all exposed: the lookups "
                      "wait for them.",
                      format_ms(lookups), percent(lookups / iteration)));
  }
}

void noise_finding(const nlohmann::json& r, std::vector<std::string>& out) {
  const double cv = number(section(r, "throughput"), "repetition_cv");
  if (cv > 0.05)
    out.push_back(
        fmt::format("Noisy: the timed repetitions vary by {} (CV); compare with more --repeat or "
                    "processes.",
                    percent(cv)));
  for (const auto& w : r.value("warnings", nlohmann::json::array()))
    if (w.is_string()) out.push_back("Warning: " + w.get<std::string>() + ".");
}

}  // namespace

std::pair<std::string, double> dominant_bound(const nlohmann::json& seconds_by_bound) {
  std::string bound;
  double most = 0, total = 0;
  for (const auto& [b, v] : seconds_by_bound.items())
    if (v.is_number()) {
      total += v.get<double>();
      if (v.get<double>() > most) most = v.get<double>(), bound = b;
    }
  return total > 0 ? std::make_pair(bound, most / total) : std::make_pair(std::string(), 0.0);
}

std::vector<std::string> findings_of(const nlohmann::json& result) {
  std::vector<std::string> out;
  phases_finding(result, out);
  roofline_finding(result, out);
  layer_finding(result, out);
  memory_finding(result, out);
  pipeline_and_comm_findings(result, out);
  noise_finding(result, out);
  return out;
}

}  // namespace tbd
