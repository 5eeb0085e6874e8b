#include "tbd/nn/inception3.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/pooling.h>

#include "tbd/nn/layer_scope.h"

namespace tbd::nn {
namespace F = torch::nn::functional;

int inception3_min_image_size(bool aux) { return aux ? 299 : 75; }

namespace {
torch::Tensor avg_pool_3x3_same(const torch::Tensor& x) {
  return F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1));
}
torch::Tensor max_pool_3x3_stride2(const torch::Tensor& x) {
  return F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2));
}

// torchvision's init: weights ~ N(0, stddev) truncated to [-2, 2] (absolute
// bounds, 20 or more standard deviations away, so truncation never binds);
// stddev 0.1, except 0.01 for the auxiliary 5×5 conv and 0.001 for its fc.
void init_normal(torch::Tensor& weight, double stddev) {
  torch::NoGradGuard no_grad;
  weight.normal_(0.0, stddev).clamp_(-2.0, 2.0);
}
}  // namespace

BasicConv2dImpl::BasicConv2dImpl(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                                 torch::ExpandingArray<2> stride, torch::ExpandingArray<2> padding) {
  conv = register_module(
      "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false)));
  bn = register_module("bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001)));
  init_normal(conv->weight, 0.1);
}

torch::Tensor BasicConv2dImpl::forward(const torch::Tensor& x) { return F::relu(bn(conv(x)), /*inplace=*/true); }

InceptionAImpl::InceptionAImpl(int64_t in, int64_t pool_features, InceptionWidth w) {
  branch1x1_ = register_module("branch1x1", BasicConv2d(in, w(64), 1));
  branch5x5_1_ = register_module("branch5x5_1", BasicConv2d(in, w(48), 1));
  branch5x5_2_ = register_module("branch5x5_2", BasicConv2d(w(48), w(64), 5, 1, 2));
  branch3x3dbl_1_ = register_module("branch3x3dbl_1", BasicConv2d(in, w(64), 1));
  branch3x3dbl_2_ = register_module("branch3x3dbl_2", BasicConv2d(w(64), w(96), 3, 1, 1));
  branch3x3dbl_3_ = register_module("branch3x3dbl_3", BasicConv2d(w(96), w(96), 3, 1, 1));
  branch_pool_ = register_module("branch_pool", BasicConv2d(in, w(pool_features), 1));
  out_channels = w(64) + w(64) + w(96) + w(pool_features);
}

torch::Tensor InceptionAImpl::forward(const torch::Tensor& x) {
  return torch::cat({branch1x1_(x), branch5x5_2_(branch5x5_1_(x)), branch3x3dbl_3_(branch3x3dbl_2_(branch3x3dbl_1_(x))),
                     branch_pool_(avg_pool_3x3_same(x))},
                    1);
}

InceptionBImpl::InceptionBImpl(int64_t in, InceptionWidth w) {
  branch3x3_ = register_module("branch3x3", BasicConv2d(in, w(384), 3, 2));
  branch3x3dbl_1_ = register_module("branch3x3dbl_1", BasicConv2d(in, w(64), 1));
  branch3x3dbl_2_ = register_module("branch3x3dbl_2", BasicConv2d(w(64), w(96), 3, 1, 1));
  branch3x3dbl_3_ = register_module("branch3x3dbl_3", BasicConv2d(w(96), w(96), 3, 2));
  out_channels = w(384) + w(96) + in;
}

torch::Tensor InceptionBImpl::forward(const torch::Tensor& x) {
  return torch::cat({branch3x3_(x), branch3x3dbl_3_(branch3x3dbl_2_(branch3x3dbl_1_(x))), max_pool_3x3_stride2(x)}, 1);
}

InceptionCImpl::InceptionCImpl(int64_t in, int64_t channels_7x7, InceptionWidth w) {
  const int64_t c7 = w(channels_7x7);
  const std::vector<int64_t> k17{1, 7}, k71{7, 1}, p17{0, 3}, p71{3, 0};
  branch1x1_ = register_module("branch1x1", BasicConv2d(in, w(192), 1));
  branch7x7_1_ = register_module("branch7x7_1", BasicConv2d(in, c7, 1));
  branch7x7_2_ = register_module("branch7x7_2", BasicConv2d(c7, c7, k17, 1, p17));
  branch7x7_3_ = register_module("branch7x7_3", BasicConv2d(c7, w(192), k71, 1, p71));
  branch7x7dbl_1_ = register_module("branch7x7dbl_1", BasicConv2d(in, c7, 1));
  branch7x7dbl_2_ = register_module("branch7x7dbl_2", BasicConv2d(c7, c7, k71, 1, p71));
  branch7x7dbl_3_ = register_module("branch7x7dbl_3", BasicConv2d(c7, c7, k17, 1, p17));
  branch7x7dbl_4_ = register_module("branch7x7dbl_4", BasicConv2d(c7, c7, k71, 1, p71));
  branch7x7dbl_5_ = register_module("branch7x7dbl_5", BasicConv2d(c7, w(192), k17, 1, p17));
  branch_pool_ = register_module("branch_pool", BasicConv2d(in, w(192), 1));
  out_channels = 4 * w(192);
}

torch::Tensor InceptionCImpl::forward(const torch::Tensor& x) {
  auto b7 = branch7x7_3_(branch7x7_2_(branch7x7_1_(x)));
  auto b7dbl = branch7x7dbl_5_(branch7x7dbl_4_(branch7x7dbl_3_(branch7x7dbl_2_(branch7x7dbl_1_(x)))));
  return torch::cat({branch1x1_(x), b7, b7dbl, branch_pool_(avg_pool_3x3_same(x))}, 1);
}

InceptionDImpl::InceptionDImpl(int64_t in, InceptionWidth w) {
  const std::vector<int64_t> k17{1, 7}, k71{7, 1}, p17{0, 3}, p71{3, 0};
  branch3x3_1_ = register_module("branch3x3_1", BasicConv2d(in, w(192), 1));
  branch3x3_2_ = register_module("branch3x3_2", BasicConv2d(w(192), w(320), 3, 2));
  branch7x7x3_1_ = register_module("branch7x7x3_1", BasicConv2d(in, w(192), 1));
  branch7x7x3_2_ = register_module("branch7x7x3_2", BasicConv2d(w(192), w(192), k17, 1, p17));
  branch7x7x3_3_ = register_module("branch7x7x3_3", BasicConv2d(w(192), w(192), k71, 1, p71));
  branch7x7x3_4_ = register_module("branch7x7x3_4", BasicConv2d(w(192), w(192), 3, 2));
  out_channels = w(320) + w(192) + in;
}

torch::Tensor InceptionDImpl::forward(const torch::Tensor& x) {
  return torch::cat({branch3x3_2_(branch3x3_1_(x)), branch7x7x3_4_(branch7x7x3_3_(branch7x7x3_2_(branch7x7x3_1_(x)))),
                     max_pool_3x3_stride2(x)},
                    1);
}

InceptionEImpl::InceptionEImpl(int64_t in, InceptionWidth w) {
  const std::vector<int64_t> k13{1, 3}, k31{3, 1}, p13{0, 1}, p31{1, 0};
  branch1x1_ = register_module("branch1x1", BasicConv2d(in, w(320), 1));
  branch3x3_1_ = register_module("branch3x3_1", BasicConv2d(in, w(384), 1));
  branch3x3_2a_ = register_module("branch3x3_2a", BasicConv2d(w(384), w(384), k13, 1, p13));
  branch3x3_2b_ = register_module("branch3x3_2b", BasicConv2d(w(384), w(384), k31, 1, p31));
  branch3x3dbl_1_ = register_module("branch3x3dbl_1", BasicConv2d(in, w(448), 1));
  branch3x3dbl_2_ = register_module("branch3x3dbl_2", BasicConv2d(w(448), w(384), 3, 1, 1));
  branch3x3dbl_3a_ = register_module("branch3x3dbl_3a", BasicConv2d(w(384), w(384), k13, 1, p13));
  branch3x3dbl_3b_ = register_module("branch3x3dbl_3b", BasicConv2d(w(384), w(384), k31, 1, p31));
  branch_pool_ = register_module("branch_pool", BasicConv2d(in, w(192), 1));
  out_channels = w(320) + 4 * w(384) + w(192);
}

torch::Tensor InceptionEImpl::forward(const torch::Tensor& x) {
  auto b3 = branch3x3_1_(x);
  auto b3dbl = branch3x3dbl_2_(branch3x3dbl_1_(x));
  return torch::cat({branch1x1_(x), branch3x3_2a_(b3), branch3x3_2b_(b3), branch3x3dbl_3a_(b3dbl),
                     branch3x3dbl_3b_(b3dbl), branch_pool_(avg_pool_3x3_same(x))},
                    1);
}

InceptionAuxImpl::InceptionAuxImpl(int64_t in, int64_t classes, InceptionWidth w) {
  conv0_ = register_module("conv0", BasicConv2d(in, w(128), 1));
  conv1_ = register_module("conv1", BasicConv2d(w(128), w(768), 5));
  fc_ = register_module("fc", torch::nn::Linear(w(768), classes));
  init_normal(conv1_->conv->weight, 0.01);
  init_normal(fc_->weight, 0.001);
}

torch::Tensor InceptionAuxImpl::forward(const torch::Tensor& x) {
  auto out = F::avg_pool2d(x, F::AvgPool2dFuncOptions(5).stride(3));  // 17×17 -> 5×5
  out = conv1_(conv0_(out));                                          // -> 1×1
  out = F::adaptive_avg_pool2d(out, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
  return fc_(out);
}

Inception3Impl::Inception3Impl(const Inception3Config& config) {
  const InceptionWidth w{config.width_divisor};
  const torch::nn::MaxPool2dOptions pool = torch::nn::MaxPool2dOptions(3).stride(2);
  stem_ = register_module("stem", torch::nn::Sequential());
  stem_->push_back("Conv2d_1a_3x3", BasicConv2d(3, w(32), 3, 2));
  stem_->push_back("Conv2d_2a_3x3", BasicConv2d(w(32), w(32), 3));
  stem_->push_back("Conv2d_2b_3x3", BasicConv2d(w(32), w(64), 3, 1, 1));
  stem_->push_back("maxpool1", torch::nn::MaxPool2d(pool));
  stem_->push_back("Conv2d_3b_1x1", BasicConv2d(w(64), w(80), 1));
  stem_->push_back("Conv2d_4a_3x3", BasicConv2d(w(80), w(192), 3));
  stem_->push_back("maxpool2", torch::nn::MaxPool2d(pool));

  mixed_5_6_ = register_module("mixed_5_6", torch::nn::Sequential());
  int64_t channels = w(192);
  auto add = [&channels](torch::nn::Sequential& seq, const char* name, auto block) {
    channels = block->out_channels;
    seq->push_back(name, block);
  };
  add(mixed_5_6_, "Mixed_5b", InceptionA(channels, 32, w));
  add(mixed_5_6_, "Mixed_5c", InceptionA(channels, 64, w));
  add(mixed_5_6_, "Mixed_5d", InceptionA(channels, 64, w));
  add(mixed_5_6_, "Mixed_6a", InceptionB(channels, w));
  add(mixed_5_6_, "Mixed_6b", InceptionC(channels, 128, w));
  add(mixed_5_6_, "Mixed_6c", InceptionC(channels, 160, w));
  add(mixed_5_6_, "Mixed_6d", InceptionC(channels, 160, w));
  add(mixed_5_6_, "Mixed_6e", InceptionC(channels, 192, w));
  if (config.aux) aux_ = register_module("AuxLogits", InceptionAux(channels, config.classes, w));

  mixed_7_ = register_module("mixed_7", torch::nn::Sequential());
  add(mixed_7_, "Mixed_7a", InceptionD(channels, w));
  add(mixed_7_, "Mixed_7b", InceptionE(channels, w));
  add(mixed_7_, "Mixed_7c", InceptionE(channels, w));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  fc_ = register_module("fc", torch::nn::Linear(channels, config.classes));
  init_normal(fc_->weight, 0.1);
  // Batch norm starts at weight 1, bias 0 (LibTorch's default, as torchvision sets it).
}

InceptionOutput Inception3Impl::forward(const torch::Tensor& images) {
  InceptionOutput out;
  torch::Tensor x;
  {
    LayerScope layer("stem");
    x = stem_->forward(images);
  }
  {
    LayerScope layer("mixed_5_6");
    x = mixed_5_6_->forward(x);
  }
  if (aux_ && is_training()) {
    LayerScope layer("AuxLogits");
    out.aux_logits = aux_(x);
  }
  {
    LayerScope layer("mixed_7");
    x = mixed_7_->forward(x);
  }
  LayerScope layer("fc");  // average pool, dropout, classifier
  x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
  out.logits = fc_(dropout_(x));
  return out;
}

}  // namespace tbd::nn
