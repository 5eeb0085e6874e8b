#include "tbd/nn/attention.h"

#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/torch.h>

#include <stdexcept>

#include "tbd/nn/linear.h"

namespace tbd::nn {

MultiHeadAttentionImpl::MultiHeadAttentionImpl(int64_t d_model, int64_t heads, double dropout, AttentionKind kind)
    : heads_(heads), dropout_(dropout) {
  if (d_model % heads != 0) throw std::invalid_argument("d_model must be a multiple of the head count");
  if (kind == AttentionKind::self) {
    qkv = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
  } else {
    q = register_module("q", torch::nn::Linear(d_model, d_model));
    k = register_module("k", torch::nn::Linear(d_model, d_model));
    v = register_module("v", torch::nn::Linear(d_model, d_model));
  }
  out = register_module("out", torch::nn::Linear(d_model, d_model));
}

std::vector<torch::Tensor> MultiHeadAttentionImpl::input_projection_weights() const {
  if (qkv) return qkv->weight.chunk(3, 0);
  return {q->weight, k->weight, v->weight};
}

std::vector<torch::Tensor> MultiHeadAttentionImpl::input_projection_biases() const {
  if (qkv) return {qkv->bias};
  return {q->bias, k->bias, v->bias};
}

torch::Tensor MultiHeadAttentionImpl::split_heads(const torch::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, x.size(2) / heads_}).transpose(1, 2);
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& memory,
                                              const std::optional<torch::Tensor>& mask, bool causal) {
  torch::Tensor qs, ks, vs;
  if (qkv) {
    if (!query.is_same(memory)) throw std::invalid_argument("self-attention takes one sequence as query and memory");
    auto parts = linear(qkv, query).chunk(3, -1);
    qs = parts[0], ks = parts[1], vs = parts[2];
  } else {
    qs = linear(q, query), ks = linear(k, memory), vs = linear(v, memory);
  }
  auto y = at::scaled_dot_product_attention(split_heads(qs), split_heads(ks), split_heads(vs), mask,
                                            is_training() ? dropout_ : 0.0, causal);
  y = y.transpose(1, 2).reshape({query.size(0), query.size(1), query.size(2)});
  return linear(out, y);
}

torch::Tensor key_padding_mask(const torch::Tensor& lengths, int64_t max_length) {
  auto positions = torch::arange(max_length, lengths.options());
  return (positions.unsqueeze(0) < lengths.unsqueeze(1)).view({lengths.size(0), 1, 1, max_length});
}

}  // namespace tbd::nn
