#include "tbd/nn/resnet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tbd/nn/frozen_batch_norm.h"
#include "tbd/nn/layer_scope.h"
#include "tbd/nn/linear.h"
#include "tbd/nn/shard_unit.h"

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

std::vector<std::string> resnet_prunable_convolutions(const ResNetConfig& config) {
  auto blocks = config.blocks;
  if (blocks == std::array<int, 4>{}) blocks = resnet_blocks(config.depth);
  std::vector<std::string> names;
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < blocks[s]; ++b) {
      const std::string block = "layer" + std::to_string(s + 1) + "." + std::to_string(b) + ".";
      names.push_back(block + "conv1");
      if (resnet_uses_bottleneck(config.depth)) names.push_back(block + "conv2");
    }
  return names;
}

namespace {
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}
torch::nn::AnyModule norm(int64_t channels, bool frozen) {
  if (frozen) return torch::nn::AnyModule(FrozenBatchNorm2d(channels));
  return torch::nn::AnyModule(torch::nn::BatchNorm2d(channels));
}
}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int64_t in_channels, int64_t planes, int64_t stride, bool bottleneck,
                                     bool frozen_batch_norm, int64_t width1, int64_t width2)
    : bottleneck_(bottleneck) {
  if (width1 == 0) width1 = planes;
  if (width2 == 0) width2 = planes;
  const auto add_norm = [&](const char* name, int64_t channels) {
    auto n = norm(channels, frozen_batch_norm);
    register_module(name, n.ptr());
    return n;
  };
  const int64_t out_channels = bottleneck ? planes * kBottleneckExpansion : planes;
  if (bottleneck) {
    conv1_ = register_module("conv1", conv(in_channels, width1, 1, 1, 0));
    bn1_ = add_norm("bn1", width1);
    conv2_ = register_module("conv2", conv(width1, width2, 3, stride, 1));  // v1.5: stride here
    bn2_ = add_norm("bn2", width2);
    conv3_ = register_module("conv3", conv(width2, out_channels, 1, 1, 0));
    bn3_ = add_norm("bn3", out_channels);
  } else {
    conv1_ = register_module("conv1", conv(in_channels, width1, 3, stride, 1));
    bn1_ = add_norm("bn1", width1);
    conv2_ = register_module("conv2", conv(width1, planes, 3, 1, 1));
    bn2_ = add_norm("bn2", planes);
  }
  if (stride != 1 || in_channels != out_channels) {
    downsample_ = register_module("downsample", torch::nn::Sequential(conv(in_channels, out_channels, 1, stride, 0),
                                                                      norm(out_channels, frozen_batch_norm)));
  }
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  auto out = F::relu(bn1_.forward(conv1_(x)));
  out = bn2_.forward(conv2_(out));
  if (bottleneck_) out = bn3_.forward(conv3_(F::relu(out)));
  auto identity = downsample_ ? downsample_->forward(x) : x;
  return F::relu(out + identity);
}

ResNetImpl::ResNetImpl(const ResNetConfig& config) {
  auto blocks = config.blocks;
  if (blocks == std::array<int, 4>{}) blocks = resnet_blocks(config.depth);
  const auto prunable = resnet_prunable_convolutions(config);
  for (const auto& [name, count] : config.widths) {
    if (std::find(prunable.begin(), prunable.end(), name) == prunable.end())
      throw std::invalid_argument("'" + name + "' is not a convolution whose width can change alone (" +
                                  prunable.front() + " ... " + prunable.back() +
                                  ": a block's conv1 and, in a bottleneck, conv2; conv3, downsample and the stem "
                                  "feed the residual sum)");
    if (count < 1) throw std::invalid_argument("the width of " + name + " must be at least 1");
  }
  const auto width = [&](const std::string& name) {
    const auto it = config.widths.find(name);
    return it == config.widths.end() ? int64_t{0} : it->second;
  };
  const bool bottleneck = resnet_uses_bottleneck(config.depth);
  stem_conv_ = register_module("conv1", conv(3, config.width, 7, 2, 3));
  stem_bn_ = norm(config.width, config.frozen_batch_norm);
  register_module("bn1", stem_bn_.ptr());
  int64_t channels = config.width;
  for (int s = 0; s < 4; ++s) {
    const int64_t planes = config.width << s;
    stages_[s] = register_module("layer" + std::to_string(s + 1), torch::nn::ModuleList());
    for (int b = 0; b < blocks[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      const std::string block = "layer" + std::to_string(s + 1) + "." + std::to_string(b) + ".";
      stages_[s]->push_back(ResidualBlock(channels, planes, stride, bottleneck, config.frozen_batch_norm,
                                          width(block + "conv1"), width(block + "conv2")));
      channels = bottleneck ? planes * ResidualBlockImpl::kBottleneckExpansion : planes;
    }
    stage_channels_[s] = channels;
  }
  if (config.classifier) fc_ = register_module("fc", torch::nn::Linear(channels, config.classes));

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

std::vector<torch::Tensor> ResNetImpl::stage_outputs(const torch::Tensor& images) {
  torch::Tensor x;
  {
    LayerScope layer("stem");  // conv1, bn1, relu, max pool
    x = F::relu(stem_bn_.forward(stem_conv_(images)));
    x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
  }
  static const char* const kStageNames[] = {"layer1", "layer2", "layer3", "layer4"};
  std::vector<torch::Tensor> outputs;
  for (size_t s = 0; s < stages_.size(); ++s) {
    LayerScope layer(kStageNames[s]);
    for (auto& block : *stages_[s]) {
      auto* residual = block->as<ResidualBlock>();
      x = run_unit(*residual, [&] { return residual->forward(x); });
    }
    outputs.push_back(x);
  }
  return outputs;
}

std::vector<std::shared_ptr<torch::nn::Module>> ResNetImpl::shard_units() const {
  std::vector<std::shared_ptr<torch::nn::Module>> units;
  for (const auto& stage : stages_)
    for (const auto& block : stage->children()) units.push_back(block);
  return units;
}

torch::Tensor ResNetImpl::forward(const torch::Tensor& images) {
  if (!fc_) throw std::logic_error("ResNet built without a classifier: use stage_outputs()");
  auto x = stage_outputs(images).back();
  LayerScope layer("fc");  // average pool and classifier
  x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
  return linear(fc_, x);  // aten::linear, as torchvision's nn.Linear records it
}

}  // namespace tbd::nn
