#include "tbd/optim/warmup_cosine.h"

#include <algorithm>
#include <cmath>

namespace tbd {

double WarmupCosine::at(int64_t step) const {
  if (warmup_steps > 0 && step <= warmup_steps)
    return peak * static_cast<double>(step) / static_cast<double>(warmup_steps);
  const double minimum = min_ratio * peak;
  if (decay_steps <= 0) return minimum;
  const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps));
  return minimum + (peak - minimum) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace tbd
