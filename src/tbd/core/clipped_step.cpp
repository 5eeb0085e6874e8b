#include "tbd/core/clipped_step.h"

#include <torch/nn/utils/clip_grad.h>

namespace tbd {

void clipped_optimizer_step(Phases& phases, torch::optim::Optimizer& optimizer,
                            const std::vector<torch::Tensor>& parameters, double max_norm) {
  if (max_norm > 0) {
    auto scope = phases.optimizer_scope();
    torch::nn::utils::clip_grad_norm_(parameters, max_norm);
  }
  phases.optimizer_step(optimizer);
}

}  // namespace tbd
