// Deep Speech 2 (Amodei et al. 2016) as deepspeech.pytorch and TBD's MXNet
// configuration build it: two 2-D convolutions over the log spectrogram
// (41×11 stride 2×2, 21×11 stride 2×1, 32 channels, batch norm, hardtanh
// 0..20), seven bidirectional GRU layers of 1760 units with sequence-wise
// batch norm, then batch norm and a bias-free linear layer to 29 characters.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

namespace tbd::nn {

struct DeepSpeech2Config {
  int64_t frequency_bins = 161;  // 20 ms window at 16 kHz: 320-point FFT
  int64_t conv_channels = 32;
  int64_t rnn_layers = 7;
  int64_t rnn_hidden = 1760;
  int64_t classes = 29;  // CTC blank, apostrophe, A-Z, space
};

// Frequency rows left after the two convolutions (161 -> 81 -> 41).
int64_t deepspeech2_conv_rows(int64_t frequency_bins);
// Output frames for `frames` input frames (time stride 2, then 1).
torch::Tensor deepspeech2_output_lengths(const torch::Tensor& frames);

class DeepSpeech2Impl : public torch::nn::Module {
 public:
  explicit DeepSpeech2Impl(const DeepSpeech2Config& config);
  // spectrogram [B, 1, F, T], lengths [B] int64 (frames, on the CPU) ->
  // (log-probabilities [T', B, classes], output lengths [B] on the CPU)
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& spectrogram, const torch::Tensor& lengths);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::ModuleList rnns{nullptr};
  torch::nn::BatchNorm1d out_norm{nullptr};
  torch::nn::Linear out{nullptr};
};
TORCH_MODULE(DeepSpeech2);

// Closed form of the layer shapes above (see the test for the hand derivation).
int64_t deepspeech2_parameters(const DeepSpeech2Config& config);

}  // namespace tbd::nn
