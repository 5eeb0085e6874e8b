#include "tbd/rl/shared_rmsprop.h"

#include <torch/torch.h>

#include "tbd/core/error.h"

namespace tbd::rl {

SharedRMSprop::SharedRMSprop(std::vector<torch::Tensor> parameters, RMSpropConfig config)
    : parameters_(std::move(parameters)), config_(config) {
  for (const auto& p : parameters_) square_avg_.push_back(torch::zeros_like(p));
}

void SharedRMSprop::step(const std::vector<torch::Tensor>& gradients) {
  if (gradients.size() != parameters_.size())
    throw Error("SharedRMSprop::step got " + std::to_string(gradients.size()) + " gradients for " +
                std::to_string(parameters_.size()) + " parameters");
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const auto& g = gradients[i];
    if (!g.defined()) continue;
    square_avg_[i].mul_(config_.alpha).addcmul_(g, g, 1.0 - config_.alpha);
    parameters_[i].addcdiv_(g, (square_avg_[i] + config_.eps).sqrt_(), -config_.lr);
  }
}

}  // namespace tbd::rl
