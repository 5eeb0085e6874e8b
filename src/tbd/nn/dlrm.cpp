#include "tbd/nn/dlrm.h"

#include <cmath>

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

const std::vector<int64_t>& criteo_kaggle_table_sizes() {
  static const std::vector<int64_t> sizes = {1460,  583,  10131227, 2202608, 305, 24,     12517,   633,   3,
                                             93145, 5683, 8351593,  3194,    27,  14992,  5461306, 10,    5652,
                                             2173,  4,    7046547,  18,      15,  286181, 105,     142572};
  return sizes;
}

std::vector<int64_t> dlrm_bottom_widths(const DLRMConfig& c) {
  std::vector<int64_t> w{c.dense_features};
  w.insert(w.end(), c.bottom.begin(), c.bottom.end());
  w.push_back(c.embedding_dim);
  return w;
}

std::vector<int64_t> dlrm_top_widths(const DLRMConfig& c) {
  const int64_t vectors = static_cast<int64_t>(c.table_sizes.size()) + 1;  // tables + bottom MLP output
  std::vector<int64_t> w{c.embedding_dim + vectors * (vectors - 1) / 2};
  w.insert(w.end(), c.top.begin(), c.top.end());
  w.push_back(1);
  return w;
}

DLRMImpl::DLRMImpl(const DLRMConfig& c) {
  bottom = register_module("bottom", MLP(MLPConfig{dlrm_bottom_widths(c), true}));
  top = register_module("top", MLP(MLPConfig{dlrm_top_widths(c), false}));
  tables = register_module("tables", torch::nn::ModuleList());
  torch::NoGradGuard no_grad;
  for (int64_t rows : c.table_sizes) {
    torch::nn::EmbeddingBag bag(
        torch::nn::EmbeddingBagOptions(rows, c.embedding_dim).mode(torch::kSum).sparse(c.sparse_gradients));
    // The reference initialisation: U(-1/sqrt(rows), 1/sqrt(rows)).
    const double bound = std::sqrt(1.0 / static_cast<double>(rows));
    bag->weight.uniform_(-bound, bound);
    tables->push_back(bag);
  }
  // MLP layers as the reference: W ~ N(0, sqrt(2/(fan_in+fan_out))), b ~ N(0, sqrt(1/fan_out)).
  for (MLP* m : {&bottom, &top})
    for (size_t i = 0; i < (*m)->layers->size(); ++i) {
      auto layer = (*m)->layers->ptr<torch::nn::LinearImpl>(i);
      const double out = static_cast<double>(layer->weight.size(0));
      const double in = static_cast<double>(layer->weight.size(1));
      layer->weight.normal_(0.0, std::sqrt(2.0 / (in + out)));
      layer->bias.normal_(0.0, std::sqrt(1.0 / out));
    }
  const int64_t vectors = static_cast<int64_t>(c.table_sizes.size()) + 1;
  auto tri = torch::tril_indices(vectors, vectors, -1);  // pairs (i, j) with i > j
  pair_rows_ = register_buffer("pair_rows", tri[0].contiguous());
  pair_cols_ = register_buffer("pair_cols", tri[1].contiguous());
}

torch::Tensor DLRMImpl::forward(const torch::Tensor& dense, const torch::Tensor& sparse) {
  const int64_t batch = dense.size(0);
  torch::Tensor x, pairs;
  {
    LayerScope layer("bottom");
    x = bottom->forward(dense);  // [B, d]
  }
  std::vector<torch::Tensor> vectors{x};
  {
    LayerScope layer("tables");
    // One id per sample and table: bag b holds exactly sparse[b, t].
    const auto offsets = torch::arange(batch, sparse.options());
    for (size_t t = 0; t < tables->size(); ++t)
      vectors.push_back(tables->ptr<torch::nn::EmbeddingBagImpl>(t)->forward(
          sparse.select(1, static_cast<int64_t>(t)).contiguous(), offsets));
  }
  {
    LayerScope layer("interaction");
    auto all = torch::stack(vectors, 1);                                     // [B, 27, d]
    auto dots = torch::bmm(all, all.transpose(1, 2));                        // [B, 27, 27]
    pairs = dots.index({torch::indexing::Slice(), pair_rows_, pair_cols_});  // [B, 351]
  }
  LayerScope layer("top");
  return top->forward(torch::cat({x, pairs}, 1)).squeeze(1);
}

int64_t dlrm_parameters(const DLRMConfig& c) {
  int64_t n = 0;
  for (int64_t rows : c.table_sizes) n += rows * c.embedding_dim;
  return n + mlp_parameters(dlrm_bottom_widths(c)) + mlp_parameters(dlrm_top_widths(c));
}

}  // namespace tbd::nn
