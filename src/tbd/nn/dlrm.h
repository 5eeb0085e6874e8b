// DLRM (Naumov et al. 2019) and the production-shaped models built the same
// way: dense features through a bottom MLP, one sum-pooled embedding bag per
// categorical feature (one id per bag in the Criteo Kaggle configuration,
// several in the multi-hot ones), an interaction of the bottom MLP's output
// with the pooled embeddings, then a top MLP to one logit. The interactions:
//   dot  every pairwise dot product of those vectors (without self-pairs),
//        concatenated with the bottom MLP output (facebookresearch/dlrm);
//   cat  the vectors concatenated (DeepRecSys's RM1–RM3);
//   dcn  the vectors concatenated, through DCN-v2's low-rank cross network
//        (TorchRec's DLRM_DCN, MLPerf Training's DLRMv2).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/TensorBody.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include "tbd/nn/low_rank_cross_net.h"
#include "tbd/nn/mlp.h"

namespace tbd::nn {

// Criteo Kaggle (Display Advertising Challenge) table sizes, in feature order.
const std::vector<int64_t>& criteo_kaggle_table_sizes();

enum class DLRMInteraction { dot, cat, dcn };

struct DLRMConfig {
  int64_t dense_features = 13;
  std::vector<int64_t> table_sizes = criteo_kaggle_table_sizes();
  // Ids pooled into each table's bag per sample (the multi-hot size); empty:
  // one each. The model takes any bag lengths (offsets); this is what the
  // synthetic data draws and what the published configuration looks up.
  std::vector<int64_t> lookups;
  int64_t embedding_dim = 16;
  std::vector<int64_t> bottom = {512, 256, 64};  // hidden widths; the last layer is embedding_dim
  std::vector<int64_t> top = {512, 256};         // hidden widths; then one logit
  DLRMInteraction interaction = DLRMInteraction::dot;
  int64_t cross_layers = 3, cross_rank = 512;  // dcn only
  // The initialisation: facebookresearch/dlrm's normal MLP weights, or
  // LibTorch's (= torch.nn's) default Linear initialisation, as TorchRec.
  bool reference_mlp_init = true;
  bool sparse_gradients = true;  // as the references: the optimizer touches only the looked-up rows
  // Whether the model holds its tables; false when they are sharded across
  // ranks and the pooled embeddings come from use_pooled_embeddings().
  bool local_tables = true;
  uint64_t table_seed = 0;  // the tables' initial values (init_embedding_rows)
};

// The published configurations by name: kaggle, dcnv2, rm1, rm2, rm3
// (REFERENCE.md; docs/workloads.md#dlrm). Throws UsageError on another name.
DLRMConfig dlrm_config(const std::string& name);
const std::vector<std::string>& dlrm_config_names();

// Rows [first_row, first_row + rows.size(0)) of table `table` (of
// `table_rows` rows) at their initial values, U(-1/sqrt(table_rows),
// 1/sqrt(table_rows)) as the references draw them, from generators seeded by
// (seed, table, block of 65,536 rows): a rank holding some tables or some rows
// draws exactly the values the replicated model holds there.
void init_embedding_rows(torch::Tensor rows, int64_t table, int64_t table_rows, int64_t first_row, uint64_t seed);

// Pooled embeddings from somewhere other than the model's own tables: its
// tables sharded across data-parallel ranks (dist/sharded_embedding_bags.h).
// pooled() gives each table's [B, d] sums for this rank's B samples.
class PooledEmbeddings {
 public:
  virtual ~PooledEmbeddings() = default;
  virtual std::vector<torch::Tensor> pooled(at::TensorList bags) = 0;
};

// Widths including input and output: {13, 512, 256, 64, 16} and {367, 512, 256, 1}.
std::vector<int64_t> dlrm_bottom_widths(const DLRMConfig& c);
std::vector<int64_t> dlrm_top_widths(const DLRMConfig& c);
int64_t dlrm_interaction_width(const DLRMConfig& c);  // what the interaction hands the top MLP

class DLRMImpl : public torch::nn::Module {
 public:
  explicit DLRMImpl(const DLRMConfig& config);
  // dense [B, F] float; bags: per table its ids (1-D int64) then the offsets
  // at which each of the B bags starts in them (1-D int64, B entries), as
  // torch.nn.EmbeddingBag takes them -> logits [B].
  torch::Tensor forward(const torch::Tensor& dense, at::TensorList bags);
  // Take the pooled embeddings from `source` (a model built without local tables).
  void use_pooled_embeddings(std::shared_ptr<PooledEmbeddings> source) { pooled_source_ = std::move(source); }

  MLP bottom{nullptr}, top{nullptr};
  torch::nn::ModuleList tables{nullptr};
  LowRankCrossNet cross{nullptr};  // dcn only

 private:
  DLRMInteraction interaction_;
  size_t tables_;  // how many, local or not
  std::shared_ptr<PooledEmbeddings> pooled_source_;
  torch::Tensor pair_rows_, pair_cols_;  // dot: strictly-lower-triangle indices of the interaction
};
TORCH_MODULE(DLRM);

// Parameters without allocating the (at full scale, gigabytes of) tables:
// the embedding tables' Σ rows·dim, and the dense rest (MLPs, cross network).
int64_t dlrm_embedding_parameters(const DLRMConfig& config);
int64_t dlrm_dense_parameters(const DLRMConfig& config);
int64_t dlrm_parameters(const DLRMConfig& config);

}  // namespace tbd::nn
