// Deep Speech 2's recurrent layer: sequence-wise batch normalisation (one
// BatchNorm1d over all time steps and utterances, Laurent et al. 2016) then a
// bidirectional GRU whose two directions are summed, as in Amodei et al. 2016
// and deepspeech.pytorch. Variable lengths go through packed sequences, so the
// backward direction starts at each utterance's own last frame.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/rnn.h>

namespace tbd::nn {

class BatchRNNImpl : public torch::nn::Module {
 public:
  BatchRNNImpl(int64_t input, int64_t hidden, bool batch_norm);
  // x: [T, B, input], lengths: [B] int64 on the CPU -> [T, B, hidden]
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& lengths);

  torch::nn::BatchNorm1d norm{nullptr};  // absent in the first layer (the conv stack normalises)
  torch::nn::GRU rnn{nullptr};

 private:
  int64_t hidden_;
};
TORCH_MODULE(BatchRNN);

// 2 directions × 3 gates × (hidden·input + hidden·hidden + 2·hidden), plus 2·input for the norm.
int64_t batch_rnn_parameters(int64_t input, int64_t hidden, bool batch_norm);

}  // namespace tbd::nn
