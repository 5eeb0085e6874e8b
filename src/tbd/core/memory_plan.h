// A memory plan: what one training step of a configuration will hold,
// computed from the model's shapes before anything is allocated (`tbd plan`).
// The terms are bytes with the formula that gave them, so a user can redo
// the arithmetic; docs/metrics.md#memory-plan defines each.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

struct MemoryPlanTerm {
  std::string name;  // "weights"
  double bytes = 0;
  std::string formula;  // "4 B x 8,030,261,248 parameters (fp32)"
};

struct MemoryPlan {
  int64_t parameters = 0;
  // Resident for the whole run: weights, gradients, optimizer state.
  std::vector<MemoryPlanTerm> model_state;
  // Held from one micro-batch's forward to its backward: the tensors autograd
  // saves, the outputs the step keeps, the weight copies autocast casts.
  std::vector<MemoryPlanTerm> activations;
  // Freed within the step but alive at its peak (the loss's gradients).
  std::vector<MemoryPlanTerm> transients;
  double peak_bytes = 0;
  std::string peak_moment;               // when in the step the peak falls
  std::vector<std::string> assumptions;  // what the formulas take as given

  double model_state_bytes() const;
  double activation_bytes() const;
};

nlohmann::json to_json(const MemoryPlan& plan);

}  // namespace tbd
