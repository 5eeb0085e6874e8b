// The box-regression loss both Faster R-CNN stages use: smooth L1 with
// β = 1/9 (quadratic below β, linear above), summed, so the caller divides
// by its sample count as torchvision does.
#pragma once

#include <torch/types.h>

namespace tbd::nn {

torch::Tensor box_regression_loss_sum(const torch::Tensor& predicted, const torch::Tensor& target);

}  // namespace tbd::nn
