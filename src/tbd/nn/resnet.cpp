#include "tbd/nn/resnet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>

#include <stdexcept>
#include <string>

namespace tbd::nn {
namespace F = torch::nn::functional;

std::array<int, 4> resnet_blocks(int depth) {
  switch (depth) {
    case 18: return {2, 2, 2, 2};
    case 34: return {3, 4, 6, 3};
    case 50: return {3, 4, 6, 3};
    case 101: return {3, 4, 23, 3};
    case 152: return {3, 8, 36, 3};
  }
  throw std::invalid_argument("ResNet depth must be 18, 34, 50, 101 or 152, got " + std::to_string(depth));
}

bool resnet_uses_bottleneck(int depth) { return depth >= 50; }

namespace {
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}
}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int64_t in_channels, int64_t planes, int64_t stride, bool bottleneck)
    : bottleneck_(bottleneck) {
  const int64_t out_channels = bottleneck ? planes * kBottleneckExpansion : planes;
  if (bottleneck) {
    conv1_ = register_module("conv1", conv(in_channels, planes, 1, 1, 0));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2_ = register_module("conv2", conv(planes, planes, 3, stride, 1));  // v1.5: stride here
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
    conv3_ = register_module("conv3", conv(planes, out_channels, 1, 1, 0));
    bn3_ = register_module("bn3", torch::nn::BatchNorm2d(out_channels));
  } else {
    conv1_ = register_module("conv1", conv(in_channels, planes, 3, stride, 1));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2_ = register_module("conv2", conv(planes, planes, 3, 1, 1));
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
  }
  if (stride != 1 || in_channels != out_channels) {
    downsample_ = register_module(
        "downsample", torch::nn::Sequential(conv(in_channels, out_channels, 1, stride, 0),
                                            torch::nn::BatchNorm2d(out_channels)));
  }
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  auto out = F::relu(bn1_(conv1_(x)));
  out = bn2_(conv2_(out));
  if (bottleneck_) out = bn3_(conv3_(F::relu(out)));
  auto identity = downsample_ ? downsample_->forward(x) : x;
  return F::relu(out + identity);
}

ResNetImpl::ResNetImpl(const ResNetConfig& config) {
  auto blocks = config.blocks;
  if (blocks == std::array<int, 4>{}) blocks = resnet_blocks(config.depth);
  const bool bottleneck = resnet_uses_bottleneck(config.depth);
  stem_conv_ = register_module("conv1", conv(3, config.width, 7, 2, 3));
  stem_bn_ = register_module("bn1", torch::nn::BatchNorm2d(config.width));
  int64_t channels = config.width;
  for (int s = 0; s < 4; ++s) {
    const int64_t planes = config.width << s;
    stages_[s] = register_module("layer" + std::to_string(s + 1), torch::nn::ModuleList());
    for (int b = 0; b < blocks[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      stages_[s]->push_back(ResidualBlock(channels, planes, stride, bottleneck));
      channels = bottleneck ? planes * ResidualBlockImpl::kBottleneckExpansion : planes;
    }
  }
  fc_ = register_module("fc", torch::nn::Linear(channels, config.classes));

  // torchvision's initialisation: He (fan-out) for convolutions, BN as identity.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

torch::Tensor ResNetImpl::forward(const torch::Tensor& images) {
  auto x = F::relu(stem_bn_(stem_conv_(images)));
  x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
  for (auto& stage : stages_)
    for (auto& block : *stage) x = block->as<ResidualBlock>()->forward(x);
  x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
  return fc_(x);
}

}  // namespace tbd::nn
