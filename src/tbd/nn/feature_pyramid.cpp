#include "tbd/nn/feature_pyramid.h"

#include <torch/nn/functional/pooling.h>
#include <torch/nn/functional/upsampling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/conv.h>

namespace tbd::nn {
namespace F = torch::nn::functional;

FeaturePyramidImpl::FeaturePyramidImpl(const std::vector<int64_t>& in_channels, int64_t out_channels) {
  lateral_ = register_module("inner_blocks", torch::nn::ModuleList());
  output_ = register_module("layer_blocks", torch::nn::ModuleList());
  for (int64_t c : in_channels) {
    lateral_->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(c, out_channels, 1)));
    output_->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(out_channels, out_channels, 3).padding(1)));
  }
  // torchvision: kaiming_uniform_(a=1), zero bias.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_uniform_(c->weight, 1.0);
      torch::nn::init::zeros_(c->bias);
    }
  }
}

std::vector<torch::Tensor> FeaturePyramidImpl::forward(const std::vector<torch::Tensor>& inputs) {
  const auto conv = [](torch::nn::ModuleList& list, size_t i, const torch::Tensor& x) {
    return list[i]->as<torch::nn::Conv2d>()->forward(x);
  };
  const size_t n = inputs.size();
  std::vector<torch::Tensor> outputs(n);
  auto top_down = conv(lateral_, n - 1, inputs[n - 1]);
  outputs[n - 1] = conv(output_, n - 1, top_down);
  for (size_t i = n - 1; i-- > 0;) {
    const auto upsampled =
        F::interpolate(top_down, F::InterpolateFuncOptions()
                                     .size(std::vector<int64_t>{inputs[i].size(2), inputs[i].size(3)})
                                     .mode(torch::kNearest));
    top_down = conv(lateral_, i, inputs[i]) + upsampled;
    outputs[i] = conv(output_, i, top_down);
  }
  outputs.push_back(F::max_pool2d(outputs.back(), F::MaxPool2dFuncOptions(1).stride(2)));
  return outputs;
}

}  // namespace tbd::nn
