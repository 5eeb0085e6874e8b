// A multi-layer perceptron: Linear layers of the given widths with ReLU
// between them. NCF's MLP tower and DLRM's bottom and top MLPs are this.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct MLPConfig {
  std::vector<int64_t> widths;  // input width first: {13, 512, 256} is 13->512->256
  bool relu_after_last = true;  // DLRM's bottom MLP ends in ReLU; a logit layer does not
};

class MLPImpl : public torch::nn::Module {
 public:
  explicit MLPImpl(MLPConfig config);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::ModuleList layers{nullptr};

 private:
  MLPConfig config_;
};
TORCH_MODULE(MLP);

// Σ (in·out + out) over the layers, without building anything.
int64_t mlp_parameters(const std::vector<int64_t>& widths);

}  // namespace tbd::nn
