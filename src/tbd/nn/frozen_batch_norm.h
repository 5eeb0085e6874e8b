// Batch normalisation with fixed statistics and affine terms, all held as
// buffers (torchvision's FrozenBatchNorm2d): detection fine-tunes with
// batches of two images, too few for batch statistics, so the backbone's
// normalisation is frozen and contributes no parameters.
//
// There are no pretrained weights here, so the statistics are taken once at
// set-up from a calibration batch (calibrate_frozen_batch_norms), the
// data-dependent stand-in for an ImageNet-trained backbone's statistics.
#pragma once

#include <cstdint>
#include <functional>

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

class FrozenBatchNorm2dImpl : public torch::nn::Cloneable<FrozenBatchNorm2dImpl> {
 public:
  explicit FrozenBatchNorm2dImpl(int64_t channels, double eps = 1e-5);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight, bias, running_mean, running_var;  // buffers
  bool calibrating = false;                               // forward records the input's statistics first

 private:
  int64_t channels_;
  double eps_;
};
TORCH_MODULE(FrozenBatchNorm2d);

// Runs `forward` once without gradients while every FrozenBatchNorm2d in
// `model` records the statistics of its input; layers see the outputs of
// already calibrated layers, as in a batch-norm network at initialisation.
void calibrate_frozen_batch_norms(torch::nn::Module& model, const std::function<void()>& forward);

}  // namespace tbd::nn
