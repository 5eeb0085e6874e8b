// Feature Pyramid Network (Lin et al. 2017) as torchvision builds it: a 1×1
// lateral convolution per backbone stage, a top-down path adding the
// nearest-upsampled coarser level, a 3×3 output convolution per level, and
// one extra level by max-pooling the coarsest output (kernel 1, stride 2)
// for the RPN's largest anchors.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

class FeaturePyramidImpl : public torch::nn::Module {
 public:
  FeaturePyramidImpl(const std::vector<int64_t>& in_channels, int64_t out_channels);
  // inputs: finest first; returns one map per input plus the pooled extra level.
  std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs);

 private:
  torch::nn::ModuleList lateral_{nullptr}, output_{nullptr};
};
TORCH_MODULE(FeaturePyramid);

}  // namespace tbd::nn
