// Llama 3 (Dubey et al. 2024) as Meta's reference code and Hugging Face's
// LlamaForCausalLM build it: token embedding; per block RMSNorm → grouped-
// query attention with rotary position embeddings → residual → RMSNorm →
// SwiGLU feed-forward → residual; a final RMSNorm; the output projection,
// untied (8B, 70B) or tied to the embedding (1B, 3B). No biases anywhere.
//
// Module names follow Hugging Face's (embed_tokens, layers.N.self_attn.q_proj,
// layers.N.mlp.gate_proj, input_layernorm, norm, lm_head) so a state dict
// copies across by name (tests/cli/llama_hf_test.sh checks the logits).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "tbd/core/options.h"

namespace tbd::nn {

// Llama 3.1's rotary frequency scaling ("rope_type": "llama3"): wavelengths
// longer than original_context / low_freq_factor are stretched by `factor`,
// shorter than original_context / high_freq_factor are kept, and those in
// between are interpolated smoothly.
struct LlamaRopeScaling {
  bool enabled = true;
  double factor = 8.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;
  int64_t original_context = 8192;
};

struct LlamaConfig {  // defaults: Llama 3.1 8B
  int64_t vocabulary = 128256;
  int64_t context = 8192;
  int64_t layers = 32, d_model = 4096, heads = 32, kv_heads = 8, head_dim = 128;
  int64_t ffn = 14336;
  bool tied = false;  // output projection = token embedding (1B, 3B)
  double norm_eps = 1e-5;
  double rope_theta = 500000.0;
  LlamaRopeScaling rope_scaling;
  ActivationCheckpointing checkpointing;  // blocks that re-run their forward in backward
};

// The published sizes: "1b", "3b" (Llama 3.2), "8b", "70b" (Llama 3.1).
// Throws UsageError for another name.
LlamaConfig llama_published_config(const std::string& size);

// Parameters of the model `c` builds, from its shapes alone (nothing is
// allocated, so 70B's 280 GB are never needed): per layer q and o d×(H·hd),
// k and v d×(KV·hd), the FFN 3·d·F, two norms of d; plus the embedding V·d,
// the output V·d when untied, and the final norm d.
int64_t llama_parameter_count(const LlamaConfig& c);

// Llama's FFN width rule: 2/3 of 4d, times an optional multiplier, rounded up
// to a multiple (8B: 4·4096·2/3 = 10922, × 1.3 = 14198, up to 1024s = 14336).
int64_t llama_ffn_width(int64_t d_model, double multiplier, int64_t multiple_of);

// RMSNorm (Zhang & Sennrich 2019): x / √(mean(x²) + ε) · weight, no bias, no
// mean subtraction; ATen's rms_norm (a fused kernel on CUDA, composed of
// pow, mean, rsqrt and products on the CPU).
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t d, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  int64_t d_;
  double eps_;
};
TORCH_MODULE(RMSNorm);

// The rotary tables of positions 0..context−1: cos and sin of position ·
// inverse frequency, [context, head_dim], each frequency twice (the first and
// second half of a head: Hugging Face's rotate_half layout).
struct RopeTables {
  torch::Tensor cos, sin;
};
RopeTables llama_rope_tables(const LlamaConfig& c);
// The inverse frequencies (head_dim/2 of them), scaled when c.rope_scaling is enabled.
torch::Tensor llama_inverse_frequencies(const LlamaConfig& c);

// Grouped-query attention: H query heads share KV key/value heads in groups
// of H/KV (KV = H is multi-head attention). Causal, through ATen's
// scaled_dot_product_attention.
class LlamaAttentionImpl : public torch::nn::Module {
 public:
  explicit LlamaAttentionImpl(const LlamaConfig& c);
  // x [B, T, d]; cos, sin [T, head_dim] → [B, T, d]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  int64_t heads_, kv_heads_, head_dim_;
};
TORCH_MODULE(LlamaAttention);

// SwiGLU (Shazeer 2020): down(silu(gate(x)) · up(x)).
class LlamaFeedForwardImpl : public torch::nn::Module {
 public:
  explicit LlamaFeedForwardImpl(const LlamaConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(LlamaFeedForward);

// One decoder block, a module of its own so activation checkpointing can wrap
// it: x + attention(norm(x)), then + feed_forward(norm(·)).
class LlamaBlockImpl : public torch::nn::Module {
 public:
  explicit LlamaBlockImpl(const LlamaConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  LlamaAttention self_attn{nullptr};
  LlamaFeedForward mlp{nullptr};
};
TORCH_MODULE(LlamaBlock);

class LlamaImpl : public torch::nn::Module {
 public:
  explicit LlamaImpl(const LlamaConfig& config);
  torch::Tensor forward(const torch::Tensor& ids);  // [B, T] → logits [B, T, vocabulary]
  // The wrapping units of --sharding full (nn/shard_unit.h), in forward order: the blocks.
  std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const;
  const LlamaConfig& config() const { return config_; }
  // The output projection's weight: lm_head's, or the embedding's when tied.
  const torch::Tensor& output_weight() const;

 private:
  LlamaConfig config_;
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers;
  RMSNorm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // untied only
  torch::Tensor rope_cos_, rope_sin_;  // buffers [context, head_dim]
};
TORCH_MODULE(Llama);

}  // namespace tbd::nn
