#include "tbd/nn/dlrm.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

const std::vector<int64_t>& criteo_kaggle_table_sizes() {
  static const std::vector<int64_t> sizes = {1460,  583,  10131227, 2202608, 305, 24,     12517,   633,   3,
                                             93145, 5683, 8351593,  3194,    27,  14992,  5461306, 10,    5652,
                                             2173,  4,    7046547,  18,      15,  286181, 105,     142572};
  return sizes;
}

const std::vector<std::string>& dlrm_config_names() {
  static const std::vector<std::string> names = {"kaggle", "dcnv2", "rm1", "rm2", "rm3"};
  return names;
}

DLRMConfig dlrm_config(const std::string& name) {
  DLRMConfig c;  // kaggle: the struct's defaults
  if (name == "kaggle") return c;
  if (name == "dcnv2") {
    // MLPerf Training DLRMv2 (mlcommons/training recommendation_v2/torchrec_dlrm
    // README): Criteo 1TB's tables capped at 40M rows, its multi-hot sizes.
    c.table_sizes = {40000000, 39060,    17295,    7424,     20265,  3,     7122, 1543, 63,
                     40000000, 3067956,  405282,   10,       2209,   11938, 155,  4,    976,
                     14,       40000000, 40000000, 40000000, 590152, 12973, 108,  36};
    c.lookups = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
    c.embedding_dim = 128;
    c.bottom = {512, 256};
    c.top = {1024, 1024, 512, 256};
    c.interaction = DLRMInteraction::dcn;
    c.cross_layers = 3;
    c.cross_rank = 512;
    c.reference_mlp_init = false;  // TorchRec's MLPs keep torch.nn.Linear's initialisation
    return c;
  }
  // DeepRecSys (harvard-acc/DeepRecSys models/configs/dlrm_rm*.json): the
  // bottom MLP's first width is the dense feature count, its last the
  // embedding dimension; fixed lookups per table; concat interaction.
  struct RM {
    const char* name;
    int64_t dense;
    std::vector<int64_t> bottom, top;
    int64_t tables, rows, dim, lookups;
  };
  static const std::vector<RM> rms = {{"rm1", 128, {64}, {256, 64}, 8, 4'000'000, 32, 80},
                                      {"rm2", 256, {128}, {128, 64}, 32, 500'000, 64, 120},
                                      {"rm3", 2560, {1024, 256}, {512, 256}, 10, 2'000'000, 32, 20}};
  for (const auto& rm : rms)
    if (name == rm.name) {
      c.dense_features = rm.dense;
      c.bottom = rm.bottom;
      c.top = rm.top;
      c.table_sizes.assign(static_cast<size_t>(rm.tables), rm.rows);
      c.lookups.assign(static_cast<size_t>(rm.tables), rm.lookups);
      c.embedding_dim = rm.dim;
      c.interaction = DLRMInteraction::cat;
      return c;
    }
  throw UsageError("unknown DLRM configuration '" + name + "': use kaggle, dcnv2, rm1, rm2 or rm3");
}

void init_embedding_rows(torch::Tensor rows, int64_t table, int64_t table_rows, int64_t first_row, uint64_t seed) {
  constexpr int64_t kBlock = 65536;
  // The reference initialisation (facebookresearch/dlrm and TorchRec's
  // default alike): U(-1/sqrt(rows), 1/sqrt(rows)).
  const double bound = std::sqrt(1.0 / static_cast<double>(table_rows));
  torch::NoGradGuard no_grad;
  const int64_t end = first_row + rows.size(0);
  for (int64_t block = first_row / kBlock; block * kBlock < end; ++block) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(
        derive_seed(derive_seed(seed, static_cast<uint64_t>(table)), static_cast<uint64_t>(block)));
    const int64_t block_start = block * kBlock;
    const int64_t block_rows = std::min(kBlock, table_rows - block_start);
    const auto values = torch::empty({block_rows, rows.size(1)}).uniform_(-bound, bound, gen);
    const int64_t from = std::max(first_row, block_start), to = std::min(end, block_start + block_rows);
    rows.narrow(0, from - first_row, to - from).copy_(values.narrow(0, from - block_start, to - from));
  }
}

std::vector<int64_t> dlrm_bottom_widths(const DLRMConfig& c) {
  std::vector<int64_t> w{c.dense_features};
  w.insert(w.end(), c.bottom.begin(), c.bottom.end());
  w.push_back(c.embedding_dim);
  return w;
}

int64_t dlrm_interaction_width(const DLRMConfig& c) {
  const int64_t vectors = static_cast<int64_t>(c.table_sizes.size()) + 1;  // tables + bottom MLP output
  if (c.interaction == DLRMInteraction::dot) return c.embedding_dim + vectors * (vectors - 1) / 2;
  return vectors * c.embedding_dim;  // cat, and dcn (the cross network keeps the width)
}

std::vector<int64_t> dlrm_top_widths(const DLRMConfig& c) {
  std::vector<int64_t> w{dlrm_interaction_width(c)};
  w.insert(w.end(), c.top.begin(), c.top.end());
  w.push_back(1);
  return w;
}

namespace {
LowRankCrossNetConfig cross_config(const DLRMConfig& c) {
  return {.width = dlrm_interaction_width(c), .layers = c.cross_layers, .rank = c.cross_rank};
}
}  // namespace

DLRMImpl::DLRMImpl(const DLRMConfig& c) : interaction_(c.interaction), tables_(c.table_sizes.size()) {
  bottom = register_module("bottom", MLP(MLPConfig{dlrm_bottom_widths(c), true}));
  if (c.interaction == DLRMInteraction::dcn) cross = register_module("cross", LowRankCrossNet(cross_config(c)));
  top = register_module("top", MLP(MLPConfig{dlrm_top_widths(c), false}));
  torch::NoGradGuard no_grad;
  // facebookresearch/dlrm's MLP layers: W ~ N(0, sqrt(2/(fan_in+fan_out))), b ~ N(0, sqrt(1/fan_out)).
  if (c.reference_mlp_init)
    for (MLP* m : {&bottom, &top})
      for (size_t i = 0; i < (*m)->layers->size(); ++i) {
        auto layer = (*m)->layers->ptr<torch::nn::LinearImpl>(i);
        const double out = static_cast<double>(layer->weight.size(0));
        const double in = static_cast<double>(layer->weight.size(1));
        layer->weight.normal_(0.0, std::sqrt(2.0 / (in + out)));
        layer->bias.normal_(0.0, std::sqrt(1.0 / out));
      }
  // The tables last: their construction draws from the global generator,
  // which the MLPs' initial values above must not depend on (a rank holding
  // no tables, --embedding-sharding, builds the same MLPs).
  if (c.local_tables) {
    tables = register_module("tables", torch::nn::ModuleList());
    for (size_t t = 0; t < c.table_sizes.size(); ++t) {
      const int64_t rows = c.table_sizes[t];
      torch::nn::EmbeddingBag bag(
          torch::nn::EmbeddingBagOptions(rows, c.embedding_dim).mode(torch::kSum).sparse(c.sparse_gradients));
      init_embedding_rows(bag->weight, static_cast<int64_t>(t), rows, 0, c.table_seed);
      tables->push_back(bag);
    }
  }
  if (c.interaction == DLRMInteraction::dot) {
    const int64_t vectors = static_cast<int64_t>(c.table_sizes.size()) + 1;
    auto tri = torch::tril_indices(vectors, vectors, -1);  // pairs (i, j) with i > j
    pair_rows_ = register_buffer("pair_rows", tri[0].contiguous());
    pair_cols_ = register_buffer("pair_cols", tri[1].contiguous());
  }
}

torch::Tensor DLRMImpl::forward(const torch::Tensor& dense, at::TensorList bags) {
  TORCH_CHECK(bags.size() == 2 * tables_, "DLRM takes ids and offsets for each of its ", tables_, " tables, got ",
              bags.size(), " tensors");
  torch::Tensor x, features;
  {
    LayerScope layer("bottom");
    x = bottom->forward(dense);  // [B, d]
  }
  std::vector<torch::Tensor> vectors{x};
  {
    LayerScope layer("tables");
    if (pooled_source_) {
      for (auto& v : pooled_source_->pooled(bags)) vectors.push_back(std::move(v));
    } else {
      for (size_t t = 0; t < tables->size(); ++t)
        vectors.push_back(tables->ptr<torch::nn::EmbeddingBagImpl>(t)->forward(bags[2 * t], bags[2 * t + 1]));
    }
  }
  {
    LayerScope layer("interaction");
    if (interaction_ == DLRMInteraction::dot) {
      auto all = torch::stack(vectors, 1);                                          // [B, T+1, d]
      auto dots = torch::bmm(all, all.transpose(1, 2));                             // [B, T+1, T+1]
      auto pairs = dots.index({torch::indexing::Slice(), pair_rows_, pair_cols_});  // [B, C(T+1, 2)]
      features = torch::cat({x, pairs}, 1);
    } else {
      features = torch::cat(vectors, 1);  // [B, (T+1)·d], the bottom MLP's output first (TorchRec, DeepRecSys)
      if (interaction_ == DLRMInteraction::dcn) features = cross->forward(features);
    }
  }
  LayerScope layer("top");
  return top->forward(features).squeeze(1);
}

int64_t dlrm_embedding_parameters(const DLRMConfig& c) {
  int64_t n = 0;
  for (int64_t rows : c.table_sizes) n += rows * c.embedding_dim;
  return n;
}

int64_t dlrm_dense_parameters(const DLRMConfig& c) {
  int64_t n = mlp_parameters(dlrm_bottom_widths(c)) + mlp_parameters(dlrm_top_widths(c));
  if (c.interaction == DLRMInteraction::dcn) n += low_rank_cross_net_parameters(cross_config(c));
  return n;
}

int64_t dlrm_parameters(const DLRMConfig& c) { return dlrm_embedding_parameters(c) + dlrm_dense_parameters(c); }

}  // namespace tbd::nn
