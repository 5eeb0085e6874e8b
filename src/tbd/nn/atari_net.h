// The A3C network for Atari (Mnih et al. 2016, the architecture of Mnih et al.
// 2013): conv 16 8×8 stride 4, conv 32 4×4 stride 2, fully connected 256, each
// followed by ReLU, then a softmax policy head (as logits) and a linear value
// head, on 84×84 frames stacked 4 deep.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct AtariNetConfig {
  int64_t actions = 6;
  int64_t frames = 4;                            // stacked input frames (channels)
  int64_t image = 84;                            // input height and width
  int64_t conv1 = 16, conv2 = 32, hidden = 256;  // published widths
};

struct PolicyValue {
  torch::Tensor logits;  // [N, actions]; the policy is softmax(logits)
  torch::Tensor value;   // [N]
};

class AtariNetImpl : public torch::nn::Module {
 public:
  explicit AtariNetImpl(AtariNetConfig config);
  PolicyValue forward(const torch::Tensor& frames);  // [N, frames, image, image] in [0, 1]
  const AtariNetConfig& config() const { return config_; }

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc{nullptr}, policy{nullptr}, value{nullptr};

 private:
  AtariNetConfig config_;
};
TORCH_MODULE(AtariNet);

// Spatial size after the two convolutions (84 → 20 → 9).
int64_t atari_net_feature_size(const AtariNetConfig& config);
// The closed form of the parameter count, from the layer shapes.
int64_t atari_net_parameters(const AtariNetConfig& config);

}  // namespace tbd::nn
