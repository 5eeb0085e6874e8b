// Multi-head scaled dot-product attention (Vaswani et al. 2017), computed
// by ATen's fused scaled_dot_product_attention so each device uses its best
// kernel (flash / memory-efficient on CUDA).
#pragma once

#include <cstdint>
#include <optional>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  // Query, key, value and output projections d→d, each with a bias.
  MultiHeadAttentionImpl(int64_t d_model, int64_t heads, double dropout);

  // query [B, Tq, d], memory [B, Tk, d] → [B, Tq, d]. `mask` is boolean,
  // broadcastable to [B, heads, Tq, Tk], true where attending is allowed;
  // `causal`: position t sees positions ≤ t only (then no mask).
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& memory,
                        const std::optional<torch::Tensor>& mask = std::nullopt, bool causal = false);

  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, out{nullptr};

 private:
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B, T, d] → [B, h, T, d/h]
  int64_t heads_;
  double dropout_;
};
TORCH_MODULE(MultiHeadAttention);

// [B, S] lengths → [B, 1, 1, S] boolean: true on the first length[b] positions.
torch::Tensor key_padding_mask(const torch::Tensor& lengths, int64_t max_length);

}  // namespace tbd::nn
