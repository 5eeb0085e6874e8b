// Throughput if an operator class ran k times faster, or every operator ran
// at its roofline ceiling (docs/metrics.md#prediction): Amdahl's law over the
// measured step.
//   class k×:   iteration' = iteration − t_class · (1 − 1/k),
//               t_class = the class's share of operator self time (ops probe)
//                         × the timed mean iteration;
//   roofline:   iteration' = iteration − Σ headroom (roofline probe).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

// `speedups`: class name (as the ops probe names them) → factor k > 0.
// Throws UsageError for an unknown class, Error when the base lacks the probe.
nlohmann::json predict_class_speedups(const nlohmann::json& base, const std::map<std::string, double>& speedups);
nlohmann::json predict_at_roofline(const nlohmann::json& base);

}  // namespace tbd
