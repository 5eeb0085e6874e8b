// DLRM (Naumov et al. 2019) as facebookresearch/dlrm builds it: dense
// features through a bottom MLP, one sum-mode embedding bag per categorical
// feature, pairwise dot products of all those vectors (without self-pairs),
// concatenated with the bottom MLP output, then a top MLP to one logit.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include "tbd/nn/mlp.h"

namespace tbd::nn {

// Criteo Kaggle (Display Advertising Challenge) table sizes, in feature order.
const std::vector<int64_t>& criteo_kaggle_table_sizes();

struct DLRMConfig {
  int64_t dense_features = 13;
  std::vector<int64_t> table_sizes = criteo_kaggle_table_sizes();
  int64_t embedding_dim = 16;
  std::vector<int64_t> bottom = {512, 256, 64};  // hidden widths; the last layer is embedding_dim
  std::vector<int64_t> top = {512, 256};         // hidden widths; then one logit
  bool sparse_gradients = true;                  // as the reference: SGD touches only the looked-up rows
};

// Widths including input and output: {13, 512, 256, 64, 16} and {367, 512, 256, 1}.
std::vector<int64_t> dlrm_bottom_widths(const DLRMConfig& c);
std::vector<int64_t> dlrm_top_widths(const DLRMConfig& c);

class DLRMImpl : public torch::nn::Module {
 public:
  explicit DLRMImpl(const DLRMConfig& config);
  // dense [B, 13] float, sparse [B, 26] int64 (one id per table) -> logits [B]
  torch::Tensor forward(const torch::Tensor& dense, const torch::Tensor& sparse);

  MLP bottom{nullptr}, top{nullptr};
  torch::nn::ModuleList tables{nullptr};

 private:
  torch::Tensor pair_rows_, pair_cols_;  // strictly-lower-triangle indices of the interaction
};
TORCH_MODULE(DLRM);

// Σ table_sizes·dim + bottom MLP + top MLP, computed without allocating the
// (at full scale, 2 GB) tables.
int64_t dlrm_parameters(const DLRMConfig& config);

}  // namespace tbd::nn
