#include "tbd/nn/mlp.h"

#include <torch/nn/modules/linear.h>

#include "tbd/core/error.h"

namespace tbd::nn {

MLPImpl::MLPImpl(MLPConfig config) : config_(std::move(config)) {
  if (config_.widths.size() < 2) throw Error("an MLP needs an input and at least one layer width");
  layers = register_module("layers", torch::nn::ModuleList());
  for (size_t i = 1; i < config_.widths.size(); ++i)
    layers->push_back(torch::nn::Linear(config_.widths[i - 1], config_.widths[i]));
}

torch::Tensor MLPImpl::forward(torch::Tensor x) {
  const size_t n = layers->size();
  for (size_t i = 0; i < n; ++i) {
    x = layers->ptr<torch::nn::LinearImpl>(i)->forward(x);
    if (i + 1 < n || config_.relu_after_last) x = torch::relu(x);
  }
  return x;
}

int64_t mlp_parameters(const std::vector<int64_t>& widths) {
  int64_t n = 0;
  for (size_t i = 1; i < widths.size(); ++i) n += widths[i - 1] * widths[i] + widths[i];
  return n;
}

}  // namespace tbd::nn
