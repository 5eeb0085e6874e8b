#include "tbd/nn/seq2seq.h"

#include <torch/nn/utils/rnn.h>
#include <torch/torch.h>

#include <optional>

#include <ATen/ops/scaled_dot_product_attention.h>

#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

LuongAttentionImpl::LuongAttentionImpl(int64_t hidden) {
  score = register_module("score", torch::nn::Linear(torch::nn::LinearOptions(hidden, hidden).bias(false)));
  combine = register_module("combine", torch::nn::Linear(torch::nn::LinearOptions(2 * hidden, hidden).bias(false)));
}

torch::Tensor LuongAttentionImpl::keys(const torch::Tensor& encoder_outputs) { return score(encoder_outputs); }

// Luong's "general" score h_tᵀ·W_a·h̄_s is an unscaled dot product of the
// decoder state with the projected encoder outputs (the keys): ATen's
// scaled_dot_product_attention with scale 1 computes scores, mask, softmax
// and context in one fused call, one query per sentence.
torch::Tensor LuongAttentionImpl::forward(const torch::Tensor& h_t, const torch::Tensor& keys,
                                          const torch::Tensor& encoder_outputs, const torch::Tensor& mask) {
  const int64_t b = h_t.size(0), s = keys.size(1), h = h_t.size(1);
  auto context = at::scaled_dot_product_attention(h_t.view({b, 1, 1, h}), keys.unsqueeze(1),
                                                  encoder_outputs.unsqueeze(1), mask.view({b, 1, 1, s}),
                                                  /*dropout_p=*/0.0, /*is_causal=*/false, /*scale=*/1.0)
                     .view({b, h});
  return torch::tanh(combine(torch::cat({context, h_t}, 1)));
}

Seq2SeqImpl::Seq2SeqImpl(const Seq2SeqConfig& c) : config_(c) {
  source_embedding_ = register_module("source_embedding", torch::nn::Embedding(c.source_vocabulary, c.embedding));
  target_embedding_ = register_module("target_embedding", torch::nn::Embedding(c.target_vocabulary, c.embedding));
  // LSTM's own dropout falls between layers; the first layer's input dropout
  // is applied to the embeddings in forward().
  encoder_ = register_module("encoder", torch::nn::LSTM(torch::nn::LSTMOptions(c.embedding, c.hidden)
                                                            .num_layers(c.layers)
                                                            .dropout(c.layers > 1 ? c.dropout : 0.0)
                                                            .batch_first(true)));
  decoder_ = register_module("decoder", torch::nn::ModuleList());
  for (int64_t l = 0; l < c.layers; ++l)
    decoder_->push_back(torch::nn::LSTMCell(l == 0 ? c.embedding + c.hidden : c.hidden, c.hidden));
  attention_ = register_module("attention", LuongAttention(c.hidden));
  output_ =
      register_module("output", torch::nn::Linear(torch::nn::LinearOptions(c.hidden, c.target_vocabulary).bias(false)));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  // TF nmt initialises every weight uniformly in [-0.1, 0.1].
  torch::NoGradGuard no_grad;
  for (auto& p : parameters()) p.uniform_(-0.1, 0.1);
}

torch::Tensor Seq2SeqImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                   const torch::Tensor& target_input) {
  namespace rnn = torch::nn::utils::rnn;
  const int64_t b = source.size(0), s = source.size(1), t = target_input.size(1);
  std::optional<LayerScope> layer(std::in_place, "encoder");  // source embedding and LSTM
  // Packing runs each sentence's recurrence over its real tokens only, so
  // the final state is that of the last word, not of the padding.
  auto packed = rnn::pack_padded_sequence(dropout_(source_embedding_(source)), source_lengths.cpu(),
                                          /*batch_first=*/true, /*enforce_sorted=*/false);
  auto [packed_out, state] = encoder_->forward_with_packed_input(packed);
  auto encoder_outputs = std::get<0>(rnn::pad_packed_sequence(packed_out, /*batch_first=*/true,
                                                              /*padding_value=*/0.0, /*total_length=*/s));
  auto [h_n, c_n] = state;  // [layers, B, H], in the batch's original order
  const auto mask = torch::arange(s, source_lengths.options().device(source.device())).unsqueeze(0) <
                    source_lengths.to(source.device()).unsqueeze(1);
  layer.reset();
  layer.emplace("attention");
  const auto keys = attention_->keys(encoder_outputs);
  layer.reset();

  std::vector<torch::Tensor> h(static_cast<size_t>(config_.layers)), c(h.size());
  for (int64_t l = 0; l < config_.layers; ++l) h[l] = h_n[l], c[l] = c_n[l];
  auto attentional = torch::zeros({b, config_.hidden}, encoder_outputs.options());
  layer.emplace("decoder");                               // target embedding and LSTM cells
  const auto embedded = target_embedding_(target_input);  // [B, T, E]
  layer.reset();
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<size_t>(t));
  for (int64_t step = 0; step < t; ++step) {
    layer.emplace("decoder");
    auto x = torch::cat({embedded.select(1, step), attentional}, 1);  // input feeding
    for (int64_t l = 0; l < config_.layers; ++l) {
      auto [h_l, c_l] = decoder_[l]->as<torch::nn::LSTMCell>()->forward(dropout_(x), std::make_tuple(h[l], c[l]));
      h[l] = h_l;
      c[l] = c_l;
      x = h_l;
    }
    layer.reset();
    layer.emplace("attention");
    attentional = attention_(x, keys, encoder_outputs, mask);
    layer.reset();
    outputs.push_back(attentional);
  }
  layer.emplace("output");
  return output_(torch::stack(outputs, 1));  // one projection GEMM for all steps
}

}  // namespace tbd::nn
