#include "tbd/nn/deepspeech2.h"

#include "tbd/nn/batch_rnn.h"
#include "tbd/nn/layer_scope.h"

namespace tbd::nn {
namespace {

torch::nn::Conv2dOptions conv(int64_t in, int64_t out, int64_t kf, int64_t kt, int64_t sf, int64_t st) {
  return torch::nn::Conv2dOptions(in, out, torch::ExpandingArray<2>({kf, kt}))
      .stride(torch::ExpandingArray<2>({sf, st}))
      .padding(torch::ExpandingArray<2>({kf / 2, kt / 2}));  // "same" along time
}

// Zeroes the frames past each utterance's end, so padding never leaks into
// the statistics of the next batch norm (deepspeech.pytorch's MaskConv).
torch::Tensor mask_time(const torch::Tensor& x, const torch::Tensor& lengths) {
  auto t = torch::arange(x.size(3), torch::TensorOptions().dtype(torch::kInt64).device(x.device()));
  auto keep = t.unsqueeze(0) < lengths.to(x.device()).unsqueeze(1);  // [B, T]
  return x * keep.unsqueeze(1).unsqueeze(1).to(x.dtype());
}

}  // namespace

int64_t deepspeech2_conv_rows(int64_t f) {
  f = (f + 2 * 20 - 41) / 2 + 1;
  return (f + 2 * 10 - 21) / 2 + 1;
}

torch::Tensor deepspeech2_output_lengths(const torch::Tensor& frames) {
  // conv1: (T + 2·5 − 11) / 2 + 1; conv2 keeps the length.
  return torch::div(frames - 1, 2, "floor") + 1;
}

DeepSpeech2Impl::DeepSpeech2Impl(const DeepSpeech2Config& c) {
  conv1 = register_module("conv1", torch::nn::Conv2d(conv(1, c.conv_channels, 41, 11, 2, 2)));
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(c.conv_channels));
  conv2 = register_module("conv2", torch::nn::Conv2d(conv(c.conv_channels, c.conv_channels, 21, 11, 2, 1)));
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(c.conv_channels));
  rnns = register_module("rnns", torch::nn::ModuleList());
  const int64_t rnn_input = c.conv_channels * deepspeech2_conv_rows(c.frequency_bins);
  for (int64_t l = 0; l < c.rnn_layers; ++l)
    rnns->push_back(BatchRNN(l == 0 ? rnn_input : c.rnn_hidden, c.rnn_hidden, /*batch_norm=*/l > 0));
  out_norm = register_module("out_norm", torch::nn::BatchNorm1d(c.rnn_hidden));
  out = register_module("out", torch::nn::Linear(torch::nn::LinearOptions(c.rnn_hidden, c.classes).bias(false)));
}

std::pair<torch::Tensor, torch::Tensor> DeepSpeech2Impl::forward(const torch::Tensor& spectrogram,
                                                                 const torch::Tensor& lengths) {
  const auto out_lengths = deepspeech2_output_lengths(lengths);
  torch::Tensor x;
  {
    LayerScope layer("conv");  // conv1, bn1, conv2, bn2 with their clipped ReLUs
    x = mask_time(torch::hardtanh(bn1->forward(conv1->forward(spectrogram)), 0, 20), out_lengths);
    x = mask_time(torch::hardtanh(bn2->forward(conv2->forward(x)), 0, 20), out_lengths);
  }
  const int64_t batch = x.size(0), steps = x.size(3);
  {
    LayerScope layer("rnns");                                           // the bidirectional GRUs
    x = x.reshape({batch, -1, steps}).permute({2, 0, 1}).contiguous();  // [T', B, C·F']
    for (size_t l = 0; l < rnns->size(); ++l) x = rnns->ptr<BatchRNNImpl>(l)->forward(x, out_lengths);
  }
  LayerScope layer("out");  // out_norm, the fully connected layer, log-softmax
  x = out_norm->forward(x.reshape({steps * batch, -1}));
  auto logits = out->forward(x).view({steps, batch, -1});
  return {torch::log_softmax(logits, 2), out_lengths};
}

int64_t deepspeech2_parameters(const DeepSpeech2Config& c) {
  const int64_t ch = c.conv_channels;
  int64_t n = (ch * 41 * 11 + ch) + 2 * ch + (ch * ch * 21 * 11 + ch) + 2 * ch;
  const int64_t rnn_input = ch * deepspeech2_conv_rows(c.frequency_bins);
  for (int64_t l = 0; l < c.rnn_layers; ++l)
    n += batch_rnn_parameters(l == 0 ? rnn_input : c.rnn_hidden, c.rnn_hidden, l > 0);
  return n + 2 * c.rnn_hidden + c.rnn_hidden * c.classes;
}

}  // namespace tbd::nn
