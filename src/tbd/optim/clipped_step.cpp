#include "tbd/optim/clipped_step.h"

#include <torch/nn/utils/clip_grad.h>

#include "tbd/optim/fast_optimizers.h"

namespace tbd {

void clipped_optimizer_step(Phases& phases, torch::optim::Optimizer& optimizer,
                            const std::vector<torch::Tensor>& parameters, double max_norm) {
  if (max_norm > 0) {
    auto scope = phases.optimizer_scope();
    GradientSync* sync = phases.gradient_sync();
    if (sync != nullptr && sync->shards_optimizer()) {
      // This rank holds a shard of the gradients: the norm is every rank's.
      sync->clip_global_norm(max_norm);
      scope.end();
      phases.optimizer_step(optimizer);
      return;
    }
    // The fused and foreach steps clip in one pass too; LibTorch's own
    // optimizers (--optimizer-impl loop) with LibTorch's own clipping.
    if (dynamic_cast<const MultiTensorStep*>(&optimizer) != nullptr)
      clip_gradients(parameters, max_norm);
    else
      torch::nn::utils::clip_grad_norm_(parameters, max_norm);
  }
  phases.optimizer_step(optimizer);
}

}  // namespace tbd
