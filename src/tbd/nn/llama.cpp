#include "tbd/nn/llama.h"

#include <ATen/ops/rms_norm.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/torch.h>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/nn/activation_checkpoint.h"
#include "tbd/nn/layer_scope.h"
#include "tbd/nn/linear.h"
#include "tbd/nn/shard_unit.h"

namespace tbd::nn {
namespace {

torch::nn::Linear no_bias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// [..., head_dim] → the second half negated, then the first: (−x₂, x₁).
torch::Tensor rotate_half(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  return x * cos + rotate_half(x) * sin;
}

}  // namespace

LlamaConfig llama_published_config(const std::string& size) {
  LlamaConfig c;  // Llama 3.1 8B
  if (size == "8b") return c;
  if (size == "70b") {
    c.layers = 80, c.d_model = 8192, c.heads = 64, c.ffn = 28672;
    return c;
  }
  // Llama 3.2: tied output, rope scaling factor 32.
  c.tied = true;
  c.rope_scaling.factor = 32.0;
  if (size == "1b") {
    c.layers = 16, c.d_model = 2048, c.heads = 32, c.head_dim = 64, c.ffn = 8192;
    return c;
  }
  if (size == "3b") {
    c.layers = 28, c.d_model = 3072, c.heads = 24, c.ffn = 8192;
    return c;
  }
  throw UsageError("unknown Llama size '" + size + "': use --set size=1b, 3b, 8b or 70b");
}

int64_t llama_parameter_count(const LlamaConfig& c) {
  const int64_t d = c.d_model, q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  const int64_t per_layer = 2 * d * q + 2 * d * kv + 3 * d * c.ffn + 2 * d;
  return c.layers * per_layer + c.vocabulary * d * (c.tied ? 1 : 2) + d;
}

int64_t llama_ffn_width(int64_t d_model, double multiplier, int64_t multiple_of) {
  auto hidden = static_cast<int64_t>(2.0 * static_cast<double>(4 * d_model) / 3.0);
  hidden = static_cast<int64_t>(multiplier * static_cast<double>(hidden));
  return (hidden + multiple_of - 1) / multiple_of * multiple_of;
}

RMSNormImpl::RMSNormImpl(int64_t d, double eps) : d_(d), eps_(eps) {
  weight = register_parameter("weight", torch::ones({d}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) { return at::rms_norm(x, {d_}, weight, eps_); }

torch::Tensor llama_inverse_frequencies(const LlamaConfig& c) {
  const int64_t half = c.head_dim / 2;
  auto inv = torch::empty({half}, torch::kFloat64);
  auto a = inv.accessor<double, 1>();
  const auto& s = c.rope_scaling;
  const double low_wavelength = static_cast<double>(s.original_context) / s.low_freq_factor;
  const double high_wavelength = static_cast<double>(s.original_context) / s.high_freq_factor;
  for (int64_t i = 0; i < half; ++i) {
    double f = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    if (s.enabled) {
      const double wavelength = 2.0 * M_PI / f;
      if (wavelength > low_wavelength) {
        f /= s.factor;  // low frequencies: stretched to the longer context
      } else if (wavelength >= high_wavelength) {
        // In between: a blend of stretched and kept, by where the wavelength lies.
        const double smooth = (static_cast<double>(s.original_context) / wavelength - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    a[i] = f;
  }
  return inv;
}

RopeTables llama_rope_tables(const LlamaConfig& c) {
  // In double, then float: angles of long contexts (position 8191 × 1) keep
  // their digits, which float products of position and frequency would not.
  const auto positions = torch::arange(c.context, torch::kFloat64);
  const auto angles = torch::outer(positions, llama_inverse_frequencies(c));
  const auto both = torch::cat({angles, angles}, -1);
  return {both.cos().to(torch::kFloat32), both.sin().to(torch::kFloat32)};
}

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaConfig& c)
    : heads_(c.heads), kv_heads_(c.kv_heads), head_dim_(c.head_dim) {
  if (c.heads % c.kv_heads != 0)
    throw UsageError("Llama: " + std::to_string(c.heads) + " query heads do not split into groups of " +
                     std::to_string(c.kv_heads) + " key/value heads; choose kv heads that divide the heads");
  q_proj = register_module("q_proj", no_bias(c.d_model, c.heads * c.head_dim));
  k_proj = register_module("k_proj", no_bias(c.d_model, c.kv_heads * c.head_dim));
  v_proj = register_module("v_proj", no_bias(c.d_model, c.kv_heads * c.head_dim));
  o_proj = register_module("o_proj", no_bias(c.heads * c.head_dim, c.d_model));
}

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t b = x.size(0), t = x.size(1);
  auto q = linear(q_proj, x).view({b, t, heads_, head_dim_}).transpose(1, 2);
  auto k = linear(k_proj, x).view({b, t, kv_heads_, head_dim_}).transpose(1, 2);
  auto v = linear(v_proj, x).view({b, t, kv_heads_, head_dim_}).transpose(1, 2);
  // The tables are float; under autocast q and k are bf16 or fp16: rotate in
  // their type, as Hugging Face does, rather than promote them to float.
  const auto c = cos.to(q.scalar_type()), s = sin.to(q.scalar_type());
  q = rotate(q, c, s);
  k = rotate(k, c, s);
  // enable_gqa: each group of heads/kv_heads query heads reads one key/value
  // head, without copying the keys and values heads/kv_heads times.
  const auto y = at::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true, std::nullopt,
                                                  /*enable_gqa=*/kv_heads_ != heads_);
  return linear(o_proj, y.transpose(1, 2).reshape({b, t, heads_ * head_dim_}));
}

LlamaFeedForwardImpl::LlamaFeedForwardImpl(const LlamaConfig& c) {
  gate_proj = register_module("gate_proj", no_bias(c.d_model, c.ffn));
  up_proj = register_module("up_proj", no_bias(c.d_model, c.ffn));
  down_proj = register_module("down_proj", no_bias(c.ffn, c.d_model));
}

torch::Tensor LlamaFeedForwardImpl::forward(const torch::Tensor& x) {
  return linear(down_proj, torch::silu(linear(gate_proj, x)) * linear(up_proj, x));
}

LlamaBlockImpl::LlamaBlockImpl(const LlamaConfig& c) {
  input_layernorm = register_module("input_layernorm", RMSNorm(c.d_model, c.norm_eps));
  self_attn = register_module("self_attn", LlamaAttention(c));
  post_attention_layernorm = register_module("post_attention_layernorm", RMSNorm(c.d_model, c.norm_eps));
  mlp = register_module("mlp", LlamaFeedForward(c));
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  torch::Tensor h;
  {
    LayerScope layer("attention");  // norm, attention, residual
    h = x + self_attn(input_layernorm(x), cos, sin);
  }
  LayerScope layer("mlp");  // norm, SwiGLU, residual
  return h + mlp(post_attention_layernorm(h));
}

LlamaImpl::LlamaImpl(const LlamaConfig& config) : config_(config) {
  if (config.head_dim % 2 != 0)
    throw UsageError("Llama: the head dimension " + std::to_string(config.head_dim) +
                     " is odd; rotary embeddings rotate pairs, so choose an even one");
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocabulary, config.d_model));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) layers->push_back(LlamaBlock(config));
  norm = register_module("norm", RMSNorm(config.d_model, config.norm_eps));
  if (!config.tied) lm_head = register_module("lm_head", no_bias(config.d_model, config.vocabulary));
  // Hugging Face's initialisation (initializer_range 0.02): every matrix
  // N(0, 0.02), RMSNorm weights 1.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : parameters())
      if (p.dim() >= 2) p.normal_(0.0, 0.02);
  }
  // Buffers, so they follow the model to its device; not parameters.
  const RopeTables rope = llama_rope_tables(config);
  rope_cos_ = register_buffer("rope_cos", rope.cos);
  rope_sin_ = register_buffer("rope_sin", rope.sin);
}

std::vector<std::shared_ptr<torch::nn::Module>> LlamaImpl::shard_units() const { return layers->children(); }

const torch::Tensor& LlamaImpl::output_weight() const { return config_.tied ? embed_tokens->weight : lm_head->weight; }

torch::Tensor LlamaImpl::forward(const torch::Tensor& ids) {
  const int64_t t = ids.size(1);
  if (t > config_.context)
    throw Error("sequence of " + std::to_string(t) + " tokens exceeds the context of " +
                std::to_string(config_.context));
  torch::Tensor x;
  {
    LayerScope layer("embedding");
    x = embed_tokens(ids);
  }
  {
    LayerScope layer("blocks");
    const auto cos = rope_cos_.narrow(0, 0, t), sin = rope_sin_.narrow(0, 0, t);
    for (int64_t i = 0; i < config_.layers; ++i) {
      auto block = layers->ptr<LlamaBlockImpl>(i);
      x = run_unit(*block, [&] {
        return checkpoint_if(
            config_.checkpointing.checkpoints(i), *block,
            [block](const std::vector<torch::Tensor>& in) { return block->forward(in[0], in[1], in[2]); },
            {x, cos, sin});
      });
    }
  }
  LayerScope layer("head");  // final norm and output projection
  return at::linear(norm(x), output_weight());
}

}  // namespace tbd::nn
