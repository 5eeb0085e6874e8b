// The 64×64 ResNet generator and critic of WGAN-GP (Gulrajani et al. 2017),
// as GoodGenerator / GoodDiscriminator in the authors' gan_64x64.py:
//   generator: linear 128 -> 4·4·8d, four up-sampling residual blocks
//     (8d->8d->4d->2d->d, 4×4 -> 64×64), batch norm, ReLU, 3×3 conv to RGB, tanh;
//   critic: 3×3 conv RGB -> d, four down-sampling residual blocks
//     (d->2d->4d->8d->8d, 64×64 -> 4×4), linear 4·4·8d -> 1.
// A residual block is norm, ReLU, conv, norm, ReLU, conv plus a 1×1-conv
// shortcut; resampling is nearest-neighbour up-sampling before the conv
// (generator) or 2×2 mean pooling after it (critic). The critic normalises
// with layer norm over (C, H, W) per sample and per-channel scale and
// offset, never batch norm: the gradient penalty is per sample.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct WganConfig {
  int64_t dim = 64;      // DIM of gan_64x64.py: channels of the 64×64 stage
  int64_t latent = 128;  // noise dimensions
};
constexpr int64_t kWganImageSize = 64;

// Generator block: BN, ReLU, up-sample + 3×3 conv, BN, ReLU, 3×3 conv;
// shortcut up-sample + 1×1 conv.
class UpResidualBlockImpl : public torch::nn::Module {
 public:
  UpResidualBlockImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_{nullptr};
};
TORCH_MODULE(UpResidualBlock);

// Critic block: LN, ReLU, 3×3 conv, LN, ReLU, 3×3 conv + mean pool;
// shortcut mean pool + 1×1 conv.
class DownResidualBlockImpl : public torch::nn::Module {
 public:
  DownResidualBlockImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::GroupNorm ln1_{nullptr}, ln2_{nullptr};  // one group: layer norm over (C, H, W)
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_{nullptr};
};
TORCH_MODULE(DownResidualBlock);

class WganGeneratorImpl : public torch::nn::Module {
 public:
  explicit WganGeneratorImpl(const WganConfig& config);
  torch::Tensor forward(const torch::Tensor& noise);  // [N, latent] -> images [N, 3, 64, 64] in (-1, 1)

 private:
  int64_t dim_;
  torch::nn::Linear input_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::BatchNorm2d output_bn_{nullptr};
  torch::nn::Conv2d output_{nullptr};
};
TORCH_MODULE(WganGenerator);

class WganCriticImpl : public torch::nn::Module {
 public:
  explicit WganCriticImpl(const WganConfig& config);
  torch::Tensor forward(const torch::Tensor& images);  // [N, 3, 64, 64] -> scores [N]

 private:
  torch::nn::Conv2d input_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(WganCritic);

}  // namespace tbd::nn
