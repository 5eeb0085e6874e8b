#include "tbd/nn/frozen_batch_norm.h"

#include <torch/autograd.h>

namespace tbd::nn {

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(int64_t channels, double eps) : channels_(channels), eps_(eps) { reset(); }

void FrozenBatchNorm2dImpl::reset() {
  weight = register_buffer("weight", torch::ones({channels_}));
  bias = register_buffer("bias", torch::zeros({channels_}));
  running_mean = register_buffer("running_mean", torch::zeros({channels_}));
  running_var = register_buffer("running_var", torch::ones({channels_}));
}

torch::Tensor FrozenBatchNorm2dImpl::forward(const torch::Tensor& x) {
  if (calibrating) {
    torch::NoGradGuard no_grad;
    const auto xf = x.to(torch::kFloat);
    const auto mean = xf.mean({0, 2, 3});
    running_mean.copy_(mean);
    running_var.copy_((xf - mean.view({1, -1, 1, 1})).square().mean({0, 2, 3}));
  }
  // One multiply-add per element, as torchvision folds it.
  const auto scale = weight * (running_var + eps_).rsqrt();
  const auto shift = bias - running_mean * scale;
  return x * scale.view({1, -1, 1, 1}).to(x.scalar_type()) + shift.view({1, -1, 1, 1}).to(x.scalar_type());
}

void calibrate_frozen_batch_norms(torch::nn::Module& model, const std::function<void()>& forward) {
  std::vector<FrozenBatchNorm2dImpl*> norms;
  for (auto& m : model.modules())
    if (auto* n = m->as<FrozenBatchNorm2dImpl>()) norms.push_back(n);
  for (auto* n : norms) n->calibrating = true;
  try {
    torch::NoGradGuard no_grad;
    forward();
  } catch (...) {
    for (auto* n : norms) n->calibrating = false;
    throw;
  }
  for (auto* n : norms) n->calibrating = false;
}

}  // namespace tbd::nn
