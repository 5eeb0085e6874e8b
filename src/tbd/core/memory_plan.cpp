#include "tbd/core/memory_plan.h"

namespace tbd {
namespace {

double sum(const std::vector<MemoryPlanTerm>& terms) {
  double total = 0;
  for (const auto& t : terms) total += t.bytes;
  return total;
}

nlohmann::json terms_json(const std::vector<MemoryPlanTerm>& terms) {
  auto out = nlohmann::json::array();
  for (const auto& t : terms) out.push_back({{"name", t.name}, {"bytes", t.bytes}, {"formula", t.formula}});
  return out;
}

}  // namespace

double MemoryPlan::model_state_bytes() const { return sum(model_state); }
double MemoryPlan::activation_bytes() const { return sum(activations); }

nlohmann::json to_json(const MemoryPlan& plan) {
  return {{"unit", "bytes"},
          {"parameters", plan.parameters},
          {"model_state", terms_json(plan.model_state)},
          {"model_state_bytes", plan.model_state_bytes()},
          {"activations_per_micro_batch", terms_json(plan.activations)},
          {"activation_bytes", plan.activation_bytes()},
          {"transients", terms_json(plan.transients)},
          {"peak_bytes", plan.peak_bytes},
          {"peak_moment", plan.peak_moment},
          {"assumptions", plan.assumptions}};
}

}  // namespace tbd
