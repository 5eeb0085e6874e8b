#include "tbd/nn/detection_losses.h"

#include <ATen/ops/smooth_l1_loss.h>

namespace tbd::nn {

torch::Tensor box_regression_loss_sum(const torch::Tensor& predicted, const torch::Tensor& target) {
  return at::smooth_l1_loss(predicted, target.to(predicted.scalar_type()), at::Reduction::Sum, 1.0 / 9);
}

}  // namespace tbd::nn
