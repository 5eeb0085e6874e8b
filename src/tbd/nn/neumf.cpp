#include "tbd/nn/neumf.h"

#include <cmath>

#include <torch/nn/init.h>

#include "tbd/core/error.h"
#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

NeuMFImpl::NeuMFImpl(const NeuMFConfig& c) {
  if (c.mlp_widths.size() < 2 || c.mlp_widths[0] % 2 != 0)
    throw Error("NeuMF needs at least two MLP widths, the first even (user and item halves)");
  const int64_t half = c.mlp_widths[0] / 2;
  mf_user = register_module("mf_user", torch::nn::Embedding(c.users, c.mf_dim));
  mf_item = register_module("mf_item", torch::nn::Embedding(c.items, c.mf_dim));
  mlp_user = register_module("mlp_user", torch::nn::Embedding(c.users, half));
  mlp_item = register_module("mlp_item", torch::nn::Embedding(c.items, half));
  mlp = register_module("mlp", MLP(MLPConfig{c.mlp_widths, true}));
  final = register_module("final", torch::nn::Linear(c.mlp_widths.back() + c.mf_dim, 1));

  // Initialisation of MLPerf's reference: embeddings N(0, 0.01), MLP layers
  // Glorot uniform, the fused layer LeCun uniform (fan-in).
  torch::NoGradGuard no_grad;
  for (auto* e : {&mf_user, &mf_item, &mlp_user, &mlp_item}) (*e)->weight.normal_(0.0, 0.01);
  for (auto& p : mlp->named_parameters()) {
    if (p.key().find("weight") != std::string::npos)
      torch::nn::init::xavier_uniform_(p.value());
    else
      p.value().zero_();
  }
  const double bound = std::sqrt(3.0 / static_cast<double>(final->weight.size(1)));
  final->weight.uniform_(-bound, bound);
  final->bias.zero_();
}

torch::Tensor NeuMFImpl::forward(const torch::Tensor& users, const torch::Tensor& items) {
  torch::Tensor gmf, deep;
  {
    LayerScope layer("gmf");  // mf_user × mf_item
    gmf = mf_user->forward(users) * mf_item->forward(items);
  }
  {
    LayerScope layer("mlp");  // mlp_user, mlp_item and the MLP tower
    deep = mlp->forward(torch::cat({mlp_user->forward(users), mlp_item->forward(items)}, 1));
  }
  LayerScope layer("final");
  return final->forward(torch::cat({gmf, deep}, 1)).squeeze(1);
}

int64_t neumf_parameters(const NeuMFConfig& c) {
  return (c.users + c.items) * (c.mf_dim + c.mlp_widths[0] / 2) + mlp_parameters(c.mlp_widths) +
         (c.mlp_widths.back() + c.mf_dim + 1);
}

}  // namespace tbd::nn
