// A Linear layer applied as Python's nn.Linear applies it.
#pragma once

#include <ATen/ops/linear.h>
#include <torch/nn/modules/linear.h>

namespace tbd::nn {

// ATen's linear (what Python's nn.Linear calls): a 3-D input folds into one
// addmm with the bias fused into the GEMM. LibTorch's C++ module instead runs
// torch::nn::functional::linear, which for more than two dimensions is a
// matmul and a separate bias addition, each with its own backward kernel.
// Same parameters, same result to rounding; one pass less over the output.
inline torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return at::linear(x, layer->weight, layer->bias.defined() ? std::optional<torch::Tensor>(layer->bias) : std::nullopt);
}

}  // namespace tbd::nn
