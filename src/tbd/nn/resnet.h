// ResNet as torchvision builds it (v1.5: the stride sits in the 3×3 conv of a
// bottleneck). Depths 18/34 use basic blocks, 50/101/152 bottlenecks.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct ResNetConfig {
  int depth = 50;  // 18, 34, 50, 101, 152
  int64_t classes = 1000;
  int64_t width = 64;              // channels of the stem; stages use 1×, 2×, 4×, 8×
  std::array<int, 4> blocks{};     // zeros: the published counts for `depth`
  bool frozen_batch_norm = false;  // FrozenBatchNorm2d (buffers only), as detection backbones use
  bool classifier = true;          // false: no pooling and fc layer (a backbone)
  // Pruned widths: output channels of a block's convolution by module path
  // ("layer3.0.conv2" -> 232). Only a convolution whose output feeds the next
  // convolution of its block can change alone: a bottleneck's conv1 and
  // conv2, a basic block's conv1 (the others join the residual sum).
  std::map<std::string, int64_t> widths;
};

// The module paths `widths` may name for this configuration, in model order.
std::vector<std::string> resnet_prunable_convolutions(const ResNetConfig& config);

// Published block counts per stage; throws std::invalid_argument for other depths.
std::array<int, 4> resnet_blocks(int depth);
bool resnet_uses_bottleneck(int depth);

class ResidualBlockImpl : public torch::nn::Module {
 public:
  // width1, width2: conv1's and conv2's output channels (0: `planes`, the
  // published width); a basic block's conv2 output is always `planes`.
  ResidualBlockImpl(int64_t in_channels, int64_t planes, int64_t stride, bool bottleneck,
                    bool frozen_batch_norm = false, int64_t width1 = 0, int64_t width2 = 0);
  torch::Tensor forward(const torch::Tensor& x);
  static constexpr int64_t kBottleneckExpansion = 4;

 private:
  bool bottleneck_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  torch::nn::AnyModule bn1_, bn2_, bn3_;  // BatchNorm2d or FrozenBatchNorm2d
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(ResidualBlock);

class ResNetImpl : public torch::nn::Module {
 public:
  explicit ResNetImpl(const ResNetConfig& config);
  torch::Tensor forward(const torch::Tensor& images);  // logits [N, classes]
  // The wrapping units of --sharding full (nn/shard_unit.h), in forward order: the residual blocks (16 in ResNet-50).
  std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const;
  // Outputs of the four stages (strides 4, 8, 16, 32), for feature pyramids.
  std::vector<torch::Tensor> stage_outputs(const torch::Tensor& images);
  std::array<int64_t, 4> stage_channels() const { return stage_channels_; }

 private:
  torch::nn::Conv2d stem_conv_{nullptr};
  torch::nn::AnyModule stem_bn_;
  std::array<int64_t, 4> stage_channels_{};
  std::array<torch::nn::ModuleList, 4> stages_;
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(ResNet);

}  // namespace tbd::nn
