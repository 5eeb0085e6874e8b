#include "tbd/nn/wgan_resnet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/functional/upsampling.h>

#include <cmath>
#include <string>

#include "tbd/nn/layer_scope.h"

namespace tbd::nn {
namespace F = torch::nn::functional;

namespace {

// tflib's initialisation: weights uniform with standard deviation
// sqrt(4 / (fan_in + fan_out)) ("he") or sqrt(2 / (fan_in + fan_out))
// (Glorot), fan = channels × kernel area; biases zero.
enum class Init { he, glorot };

void init_uniform(torch::Tensor& weight, double fan_in, double fan_out, Init init) {
  const double stddev = std::sqrt((init == Init::he ? 4.0 : 2.0) / (fan_in + fan_out));
  const double bound = stddev * std::sqrt(3.0);
  torch::NoGradGuard no_grad;
  weight.uniform_(-bound, bound);
}

// A "same"-padded conv initialised as tflib's Conv2D.
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, bool bias, Init init) {
  torch::nn::Conv2d c(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(bias));
  init_uniform(c->weight, static_cast<double>(in * kernel * kernel), static_cast<double>(out * kernel * kernel), init);
  if (bias) {
    torch::NoGradGuard no_grad;
    c->bias.zero_();
  }
  return c;
}

torch::nn::Linear linear(int64_t in, int64_t out) {  // tflib's Linear with its default (Glorot) init
  torch::nn::Linear l(in, out);
  init_uniform(l->weight, static_cast<double>(in), static_cast<double>(out), Init::glorot);
  torch::NoGradGuard no_grad;
  l->bias.zero_();
  return l;
}

// tflib's depth_to_space of four copies of the input: each pixel becomes a 2×2 block.
torch::Tensor upsample2(const torch::Tensor& x) {
  return F::interpolate(x,
                        F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
}

torch::Tensor mean_pool2(const torch::Tensor& x) { return F::avg_pool2d(x, F::AvgPool2dFuncOptions(2)); }

torch::nn::GroupNorm layer_norm(int64_t channels) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(1, channels).eps(1e-5));
}

}  // namespace

UpResidualBlockImpl::UpResidualBlockImpl(int64_t in, int64_t out) {
  shortcut_ = register_module("shortcut", conv(in, out, 1, true, Init::glorot));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(in).eps(1e-5)));
  conv1_ = register_module("conv1", conv(in, out, 3, false, Init::he));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(1e-5)));
  conv2_ = register_module("conv2", conv(out, out, 3, true, Init::he));
}

torch::Tensor UpResidualBlockImpl::forward(const torch::Tensor& x) {
  auto out = conv1_(upsample2(F::relu(bn1_(x))));
  out = conv2_(F::relu(bn2_(out)));
  return shortcut_(upsample2(x)) + out;
}

DownResidualBlockImpl::DownResidualBlockImpl(int64_t in, int64_t out) {
  shortcut_ = register_module("shortcut", conv(in, out, 1, true, Init::glorot));
  ln1_ = register_module("ln1", layer_norm(in));
  conv1_ = register_module("conv1", conv(in, in, 3, false, Init::he));
  ln2_ = register_module("ln2", layer_norm(in));
  conv2_ = register_module("conv2", conv(in, out, 3, true, Init::he));
}

torch::Tensor DownResidualBlockImpl::forward(const torch::Tensor& x) {
  auto out = conv1_(F::relu(ln1_(x)));
  out = mean_pool2(conv2_(F::relu(ln2_(out))));
  return shortcut_(mean_pool2(x)) + out;
}

WganGeneratorImpl::WganGeneratorImpl(const WganConfig& config) : dim_(config.dim) {
  const int64_t d = config.dim;
  input_ = register_module("input", linear(config.latent, 4 * 4 * 8 * d));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  const int64_t widths[] = {8 * d, 8 * d, 4 * d, 2 * d, d};
  for (int i = 0; i < 4; ++i) blocks_->push_back(UpResidualBlock(widths[i], widths[i + 1]));
  output_bn_ = register_module("output_bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(d).eps(1e-5)));
  output_ = register_module("output", conv(d, 3, 3, true, Init::he));
}

torch::Tensor WganGeneratorImpl::forward(const torch::Tensor& noise) {
  LayerScope layer("generator");
  auto x = input_(noise).view({-1, 8 * dim_, 4, 4});
  for (const auto& block : *blocks_) x = block->as<UpResidualBlock>()->forward(x);
  return torch::tanh(output_(F::relu(output_bn_(x))));
}

WganCriticImpl::WganCriticImpl(const WganConfig& config) {
  const int64_t d = config.dim;
  input_ = register_module("input", conv(3, d, 3, true, Init::glorot));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  const int64_t widths[] = {d, 2 * d, 4 * d, 8 * d, 8 * d};
  for (int i = 0; i < 4; ++i) blocks_->push_back(DownResidualBlock(widths[i], widths[i + 1]));
  output_ = register_module("output", linear(4 * 4 * 8 * d, 1));
}

torch::Tensor WganCriticImpl::forward(const torch::Tensor& images) {
  LayerScope layer("critic");
  auto x = input_(images);
  for (const auto& block : *blocks_) x = block->as<DownResidualBlock>()->forward(x);
  return output_(x.flatten(1)).view({-1});
}

}  // namespace tbd::nn
