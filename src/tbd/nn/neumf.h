// NeuMF (He et al. 2017, "Neural Collaborative Filtering"): a GMF branch
// (element-wise product of user and item factors) beside an MLP branch over
// concatenated user and item embeddings, fused by one logit layer. Layout as
// MLPerf's NCF reference: MLP embeddings are widths[0]/2 wide each.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "tbd/nn/mlp.h"

namespace tbd::nn {

struct NeuMFConfig {
  int64_t users = 138'493;  // MovieLens-20M
  int64_t items = 26'744;
  int64_t mf_dim = 64;                                    // GMF factors (MLPerf)
  std::vector<int64_t> mlp_widths = {256, 256, 128, 64};  // first: user+item embedding width
};

class NeuMFImpl : public torch::nn::Module {
 public:
  explicit NeuMFImpl(const NeuMFConfig& config);
  // users, items: [B] int64 -> logits [B]
  torch::Tensor forward(const torch::Tensor& users, const torch::Tensor& items);

  torch::nn::Embedding mf_user{nullptr}, mf_item{nullptr}, mlp_user{nullptr}, mlp_item{nullptr};
  MLP mlp{nullptr};
  torch::nn::Linear final{nullptr};
};
TORCH_MODULE(NeuMF);

// (users + items)·(mf_dim + widths[0]/2) + MLP + (widths.back() + mf_dim + 1).
int64_t neumf_parameters(const NeuMFConfig& config);

}  // namespace tbd::nn
