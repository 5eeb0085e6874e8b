#include "tbd/nn/atari_net.h"

#include "tbd/core/error.h"
#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

int64_t atari_net_feature_size(const AtariNetConfig& c) {
  const int64_t after_conv1 = (c.image - 8) / 4 + 1;
  return (after_conv1 - 4) / 2 + 1;
}

int64_t atari_net_parameters(const AtariNetConfig& c) {
  const int64_t s = atari_net_feature_size(c);
  return (c.frames * c.conv1 * 8 * 8 + c.conv1) + (c.conv1 * c.conv2 * 4 * 4 + c.conv2) +
         (c.conv2 * s * s * c.hidden + c.hidden) + (c.hidden * c.actions + c.actions) + (c.hidden + 1);
}

AtariNetImpl::AtariNetImpl(AtariNetConfig config) : config_(config) {
  if (config_.image < 20 || config_.actions < 1)
    throw Error("the Atari network needs frames of at least 20×20 pixels and one action");
  conv1 =
      register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(config_.frames, config_.conv1, 8).stride(4)));
  conv2 =
      register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(config_.conv1, config_.conv2, 4).stride(2)));
  const int64_t s = atari_net_feature_size(config_);
  fc = register_module("fc", torch::nn::Linear(config_.conv2 * s * s, config_.hidden));
  policy = register_module("policy", torch::nn::Linear(config_.hidden, config_.actions));
  value = register_module("value", torch::nn::Linear(config_.hidden, 1));
}

PolicyValue AtariNetImpl::forward(const torch::Tensor& frames) {
  torch::Tensor x;
  {
    LayerScope layer("conv");  // conv1, conv2
    x = torch::relu(conv2->forward(torch::relu(conv1->forward(frames))));
  }
  {
    LayerScope layer("fc");
    x = torch::relu(fc->forward(x.flatten(1)));
  }
  LayerScope layer("heads");  // policy and value
  return {policy->forward(x), value->forward(x).squeeze(1)};
}

}  // namespace tbd::nn
