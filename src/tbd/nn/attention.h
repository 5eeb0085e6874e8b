// Multi-head scaled dot-product attention (Vaswani et al. 2017), computed
// by ATen's fused scaled_dot_product_attention so each device uses its best
// kernel (flash / memory-efficient on CUDA).
//
// Self-attention packs its query, key and value projections into one d→3d
// matrix, as GPT-2 publishes it (c_attn) and as PyTorch's MultiheadAttention
// and fairseq store them (in_proj): one GEMM instead of three, forward and
// backward, and the same parameters (the three d×d blocks and biases,
// stacked). Attention over another sequence (the decoder's cross-attention)
// keeps separate projections.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

enum class AttentionKind {
  self,   // query, key and value from one sequence: packed qkv projection
  cross,  // query from one sequence, key and value from another: q, k, v
};

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  // Query, key, value and output projections d→d, each with a bias (for
  // self-attention the first three packed into `qkv`, d→3d).
  MultiHeadAttentionImpl(int64_t d_model, int64_t heads, double dropout, AttentionKind kind);

  // query [B, Tq, d], memory [B, Tk, d] → [B, Tq, d]. `mask` is boolean,
  // broadcastable to [B, heads, Tq, Tk], true where attending is allowed;
  // `causal`: position t sees positions ≤ t only (then no mask).
  // Self-attention takes the sequence as both query and memory.
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& memory,
                        const std::optional<torch::Tensor>& mask = std::nullopt, bool causal = false);

  // The d×d weight of each input projection (views into `qkv` for
  // self-attention), for initialisation schemes defined per matrix.
  std::vector<torch::Tensor> input_projection_weights() const;
  // The biases of the input projections (one packed bias for self-attention).
  std::vector<torch::Tensor> input_projection_biases() const;

  torch::nn::Linear qkv{nullptr};                        // self-attention
  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr};  // cross-attention
  torch::nn::Linear out{nullptr};

 private:
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B, T, d] → [B, h, T, d/h]
  int64_t heads_;
  double dropout_;
};
TORCH_MODULE(MultiHeadAttention);

// [B, S] lengths → [B, 1, 1, S] boolean: true on the first length[b] positions.
torch::Tensor key_padding_mask(const torch::Tensor& lengths, int64_t max_length);

}  // namespace tbd::nn
