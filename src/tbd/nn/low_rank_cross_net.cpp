#include "tbd/nn/low_rank_cross_net.h"

#include <torch/nn/functional/linear.h>
#include <torch/nn/init.h>

namespace tbd::nn {

LowRankCrossNetImpl::LowRankCrossNetImpl(const LowRankCrossNetConfig& c) {
  w = register_module("w", torch::nn::ParameterList());
  v = register_module("v", torch::nn::ParameterList());
  bias = register_module("bias", torch::nn::ParameterList());
  torch::NoGradGuard no_grad;
  for (int64_t l = 0; l < c.layers; ++l) {
    // TorchRec's initialisation: Xavier-normal kernels, zero bias.
    auto wl = torch::empty({c.width, c.rank});
    auto vl = torch::empty({c.rank, c.width});
    torch::nn::init::xavier_normal_(wl);
    torch::nn::init::xavier_normal_(vl);
    w->append(wl);
    v->append(vl);
    bias->append(torch::zeros({c.width}));
  }
}

torch::Tensor LowRankCrossNetImpl::forward(const torch::Tensor& x0) {
  torch::Tensor x = x0;
  for (size_t l = 0; l < w->size(); ++l) {
    // linear(x, V) = x Vᵀ: [B, rank]; then W with the bias: [B, width].
    const auto projected = torch::nn::functional::linear(x, v[l]);
    x = x0 * torch::nn::functional::linear(projected, w[l], bias[l]) + x;
  }
  return x;
}

int64_t low_rank_cross_net_parameters(const LowRankCrossNetConfig& c) {
  return c.layers * (2 * c.width * c.rank + c.width);
}

}  // namespace tbd::nn
