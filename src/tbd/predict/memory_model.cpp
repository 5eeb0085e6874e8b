#include "tbd/predict/memory_model.h"

#include <algorithm>
#include <cmath>

#include "tbd/core/error.h"

namespace tbd {

nlohmann::json predict_memory_limit(const nlohmann::json& base, long long limit_bytes, long long start) {
  const auto& m = base.value("memory", nlohmann::json());
  // A peak of null: the probe ran but could not measure (its not_available says why).
  if (!m.is_object() || !m.contains("breakdown") || !m.contains("peak_bytes") || !m["peak_bytes"].is_number())
    throw Error(
        "the base result has no memory breakdown: run it with the memory probe (it is in the default "
        "--probes list)");
  const auto& b = m["breakdown"];
  const double fixed = b.value("weights", 0.0) + b.value("weight_gradients", 0.0) + b.value("optimizer_state", 0.0);
  const double peak = m["peak_bytes"].get<double>();
  const long long batch = base.at("workload").at("options").at("batch_size").get<long long>();
  const double per_sample = std::max(0.0, peak - fixed) / static_cast<double>(batch);
  nlohmann::json out = {{"kind", "memory_limit"},
                        {"limit_bytes", limit_bytes},
                        {"base_batch_size", batch},
                        {"base_peak_bytes", peak},
                        {"fixed_bytes", fixed},
                        {"per_sample_bytes", per_sample},
                        {"model",
                         "peak(b) = fixed + per_sample * b; fixed = weights + weight gradients + optimizer "
                         "state at the base's peak"}};
  if (fixed >= static_cast<double>(limit_bytes)) {
    out["largest_fitting_batch"] = nullptr;
    out["first_out_of_memory_doubling"] = start;
    out["note"] = "the weights, their gradients and the optimizer state alone exceed the limit";
    return out;
  }
  if (per_sample <= 0) {
    out["largest_fitting_batch"] = nullptr;
    out["first_out_of_memory_doubling"] = nullptr;
    out["note"] = "the base's peak holds nothing that grows with the batch";
    return out;
  }
  const auto largest = static_cast<long long>(std::floor((static_cast<double>(limit_bytes) - fixed) / per_sample));
  long long b2 = start;
  while (b2 <= largest) b2 *= 2;
  out["largest_fitting_batch"] = largest;
  out["first_out_of_memory_doubling"] = b2;
  return out;
}

}  // namespace tbd
