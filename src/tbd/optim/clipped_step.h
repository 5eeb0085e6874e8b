// The update of workloads that clip gradients: clip to a global norm, then
// step, both inside the optimizer phase (clipping is part of the update).
// With a multi-tensor optimizer (optim/fast_optimizers.h) the clipping is
// multi-tensor as well.
#pragma once

#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "tbd/core/phases.h"

namespace tbd {

// max_norm <= 0: no clipping, a plain optimizer step.
void clipped_optimizer_step(Phases& phases, torch::optim::Optimizer& optimizer,
                            const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace tbd
