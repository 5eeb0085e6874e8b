// Inception-v3 (Szegedy et al. 2016) exactly as torchvision's inception_v3
// builds it: BasicConv2d = conv (no bias) + batch norm (eps 0.001) + ReLU,
// blocks InceptionA–E, the auxiliary classifier on Mixed_6e (training only),
// dropout before the classifier. 299×299 inputs: the auxiliary head's 5×5
// valid convolution needs Mixed_6e to be at least 17×17, which is what 299
// pixels give (without the head, 75 pixels is the minimum).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct Inception3Config {
  int64_t classes = 1000;
  bool aux = true;  // build the auxiliary classifier (used in training)
  double dropout = 0.5;
  // Every channel count of the published network is divided by this (at
  // least 1 channel each): 1 is the published network, larger is narrower
  // with the same topology.
  int64_t width_divisor = 1;
};

// Smallest square input the network accepts: 299 with the auxiliary head, 75 without.
int inception3_min_image_size(bool aux);

class BasicConv2dImpl : public torch::nn::Module {
 public:
  BasicConv2dImpl(int64_t in, int64_t out, torch::ExpandingArray<2> kernel, torch::ExpandingArray<2> stride = 1,
                  torch::ExpandingArray<2> padding = 0);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
};
TORCH_MODULE(BasicConv2d);

// Channel widths of one configuration: the published count divided by the divisor.
struct InceptionWidth {
  int64_t divisor = 1;
  int64_t operator()(int64_t published) const { return published / divisor > 0 ? published / divisor : 1; }
};

// 35×35 block: 1×1, 5×5, double 3×3 and pooled branches.
class InceptionAImpl : public torch::nn::Module {
 public:
  InceptionAImpl(int64_t in, int64_t pool_features, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels;

 private:
  BasicConv2d branch1x1_{nullptr}, branch5x5_1_{nullptr}, branch5x5_2_{nullptr}, branch3x3dbl_1_{nullptr},
      branch3x3dbl_2_{nullptr}, branch3x3dbl_3_{nullptr}, branch_pool_{nullptr};
};
TORCH_MODULE(InceptionA);

// Grid reduction 35 -> 17.
class InceptionBImpl : public torch::nn::Module {
 public:
  InceptionBImpl(int64_t in, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels;

 private:
  BasicConv2d branch3x3_{nullptr}, branch3x3dbl_1_{nullptr}, branch3x3dbl_2_{nullptr}, branch3x3dbl_3_{nullptr};
};
TORCH_MODULE(InceptionB);

// 17×17 block with factorised 7×7 convolutions (1×7 then 7×1).
class InceptionCImpl : public torch::nn::Module {
 public:
  InceptionCImpl(int64_t in, int64_t channels_7x7, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels;

 private:
  BasicConv2d branch1x1_{nullptr}, branch7x7_1_{nullptr}, branch7x7_2_{nullptr}, branch7x7_3_{nullptr},
      branch7x7dbl_1_{nullptr}, branch7x7dbl_2_{nullptr}, branch7x7dbl_3_{nullptr}, branch7x7dbl_4_{nullptr},
      branch7x7dbl_5_{nullptr}, branch_pool_{nullptr};
};
TORCH_MODULE(InceptionC);

// Grid reduction 17 -> 8.
class InceptionDImpl : public torch::nn::Module {
 public:
  InceptionDImpl(int64_t in, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels;

 private:
  BasicConv2d branch3x3_1_{nullptr}, branch3x3_2_{nullptr}, branch7x7x3_1_{nullptr}, branch7x7x3_2_{nullptr},
      branch7x7x3_3_{nullptr}, branch7x7x3_4_{nullptr};
};
TORCH_MODULE(InceptionD);

// 8×8 block with expanded filter banks (1×3 and 3×1 side by side).
class InceptionEImpl : public torch::nn::Module {
 public:
  InceptionEImpl(int64_t in, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels;

 private:
  BasicConv2d branch1x1_{nullptr}, branch3x3_1_{nullptr}, branch3x3_2a_{nullptr}, branch3x3_2b_{nullptr},
      branch3x3dbl_1_{nullptr}, branch3x3dbl_2_{nullptr}, branch3x3dbl_3a_{nullptr}, branch3x3dbl_3b_{nullptr},
      branch_pool_{nullptr};
};
TORCH_MODULE(InceptionE);

// Auxiliary classifier on the 17×17 grid: 5×5/3 average pool, 1×1 conv,
// 5×5 valid conv, global pool, linear.
class InceptionAuxImpl : public torch::nn::Module {
 public:
  InceptionAuxImpl(int64_t in, int64_t classes, InceptionWidth w);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  BasicConv2d conv0_{nullptr}, conv1_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(InceptionAux);

struct InceptionOutput {
  torch::Tensor logits;      // [N, classes]
  torch::Tensor aux_logits;  // [N, classes] in training with the auxiliary head; undefined otherwise
};

class Inception3Impl : public torch::nn::Module {
 public:
  explicit Inception3Impl(const Inception3Config& config);
  InceptionOutput forward(const torch::Tensor& images);  // images [N, 3, H, W], H = W ≥ the minimum

 private:
  torch::nn::Sequential stem_{nullptr};       // Conv2d_1a … Conv2d_4a with both max pools
  torch::nn::Sequential mixed_5_6_{nullptr};  // Mixed_5b … Mixed_6e (17×17 output)
  torch::nn::Sequential mixed_7_{nullptr};    // Mixed_7a … Mixed_7c (8×8 output)
  InceptionAux aux_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(Inception3);

}  // namespace tbd::nn
