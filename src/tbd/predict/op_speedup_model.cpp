#include "tbd/predict/op_speedup_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tbd/core/error.h"

namespace tbd {

namespace {

double mean_iteration_s(const nlohmann::json& base) { return base.at("summary").at("mean_s").get<double>(); }

nlohmann::json outcome(const nlohmann::json& base, double before, double after) {
  const double rate = base.at("throughput").at("samples_per_s").get<double>();
  return {{"iteration_ms", 1e3 * after}, {"base_iteration_ms", 1e3 * before},
          {"base_samples_per_s", rate},  {"samples_per_s", rate * before / after},
          {"speedup", before / after},   {"unit", base["throughput"].value("unit", std::string("samples/s"))}};
}

}  // namespace

nlohmann::json predict_class_speedups(const nlohmann::json& base, const std::map<std::string, double>& speedups) {
  const auto& ops = base.value("ops", nlohmann::json());
  if (!ops.is_object() || !ops.contains("by_class"))
    throw Error("the base result has no operator classes: run it with the ops probe (--probes ...,ops)");
  const double before = mean_iteration_s(base);
  double saved = 0;
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& [cls, k] : speedups) {
    if (!ops["by_class"].contains(cls)) {
      std::vector<std::string> known;
      for (const auto& [name, _] : ops["by_class"].items()) known.push_back(name);
      throw UsageError(fmt::format("unknown operator class '{}'; the classes are {}", cls, fmt::join(known, ", ")));
    }
    if (!(k > 0)) throw UsageError(fmt::format("--faster {}={}: the factor must be a positive number", cls, k));
    const double share = ops["by_class"][cls].value("share_of_self", 0.0);
    const double t = share * before;
    saved += t * (1 - 1 / k);
    parts.push_back({{"class", cls}, {"factor", k}, {"share_of_self", share}, {"class_ms", 1e3 * t}});
  }
  nlohmann::json out = outcome(base, before, before - saved);
  out["kind"] = "class_speedup";
  out["classes"] = parts;
  return out;
}

nlohmann::json predict_at_roofline(const nlohmann::json& base) {
  const auto& r = base.value("roofline", nlohmann::json());
  if (!r.is_object() || !r.contains("by_class"))
    throw Error("the base result has no roofline section: run it with the roofline probe (--probes ...,roofline)");
  const double before = mean_iteration_s(base);
  double headroom = 0;
  for (const auto& [cls, c] : r["by_class"].items()) headroom += c.value("headroom_s", 0.0);
  // Headroom is measured in the instrumented iterations; never more than the step.
  const double after = std::max(before - headroom, 1e-3 * before);
  nlohmann::json out = outcome(base, before, after);
  out["kind"] = "roofline";
  out["headroom_ms"] = 1e3 * headroom;
  return out;
}

}  // namespace tbd
