#include "tbd/nn/batch_rnn.h"

#include <torch/nn/utils/rnn.h>

namespace tbd::nn {

BatchRNNImpl::BatchRNNImpl(int64_t input, int64_t hidden, bool batch_norm) : hidden_(hidden) {
  if (batch_norm) norm = register_module("norm", torch::nn::BatchNorm1d(input));
  rnn = register_module("rnn", torch::nn::GRU(torch::nn::GRUOptions(input, hidden).bidirectional(true)));
}

torch::Tensor BatchRNNImpl::forward(torch::Tensor x, const torch::Tensor& lengths) {
  const int64_t steps = x.size(0), batch = x.size(1);
  if (norm) x = norm->forward(x.reshape({steps * batch, -1})).view({steps, batch, -1});
  namespace rnn_utils = torch::nn::utils::rnn;
  auto packed = rnn_utils::pack_padded_sequence(x, lengths, /*batch_first=*/false,
                                                /*enforce_sorted=*/false);
  auto out = std::get<0>(rnn->forward_with_packed_input(packed));
  auto padded = std::get<0>(rnn_utils::pad_packed_sequence(out, /*batch_first=*/false,
                                                           /*padding_value=*/0.0, steps));
  return padded.view({steps, batch, 2, hidden_}).sum(2);  // sum the two directions
}

int64_t batch_rnn_parameters(int64_t input, int64_t hidden, bool batch_norm) {
  return 2 * 3 * (hidden * input + hidden * hidden + 2 * hidden) + (batch_norm ? 2 * input : 0);
}

}  // namespace tbd::nn
