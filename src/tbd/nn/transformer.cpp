#include "tbd/nn/transformer.h"

#include <torch/torch.h>

#include <cmath>

#include "tbd/nn/activation_checkpoint.h"
#include "tbd/nn/layer_scope.h"
#include "tbd/nn/linear.h"
#include "tbd/nn/shard_unit.h"

namespace tbd::nn {
namespace {

// fairseq's initialisation of the Transformer: Xavier-uniform projections
// with zero biases.
void xavier(torch::nn::Linear& l) {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(l->weight);
  if (l->bias.defined()) l->bias.zero_();
}

// Xavier-uniform for each input projection matrix (d×d, also inside a
// packed qkv) and the output projection, as for separate Linear layers.
void xavier(MultiHeadAttention& a) {
  torch::NoGradGuard no_grad;
  for (auto w : a->input_projection_weights()) torch::nn::init::xavier_uniform_(w);
  for (auto b : a->input_projection_biases()) b.zero_();
  xavier(a->out);
}

}  // namespace

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t hidden) {
  fc = register_module("fc", torch::nn::Linear(d_model, hidden));
  proj = register_module("proj", torch::nn::Linear(hidden, d_model));
  xavier(fc);
  xavier(proj);
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) { return linear(proj, torch::relu(linear(fc, x))); }

// Attention dropout is 0: the paper applies dropout to sub-layer outputs only.
EncoderLayerImpl::EncoderLayerImpl(const TransformerConfig& c) {
  self_attention_ = register_module("self_attention", MultiHeadAttention(c.d_model, c.heads, 0.0, AttentionKind::self));
  ffn_ = register_module("ffn", FeedForward(c.d_model, c.ffn));
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  xavier(self_attention_);
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& source_mask) {
  torch::Tensor h;
  {
    LayerScope layer("self_attention");  // with its residual and norm
    h = norm1_(x + dropout_(self_attention_(x, x, source_mask)));
  }
  LayerScope layer("ffn");
  return norm2_(h + dropout_(ffn_(h)));
}

DecoderLayerImpl::DecoderLayerImpl(const TransformerConfig& c) {
  self_attention_ = register_module("self_attention", MultiHeadAttention(c.d_model, c.heads, 0.0, AttentionKind::self));
  cross_attention_ =
      register_module("cross_attention", MultiHeadAttention(c.d_model, c.heads, 0.0, AttentionKind::cross));
  ffn_ = register_module("ffn", FeedForward(c.d_model, c.ffn));
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})));
  norm3_ = register_module("norm3", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  xavier(self_attention_);
  xavier(cross_attention_);
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                        const torch::Tensor& source_mask) {
  // Causal self-attention: position t sees targets ≤ t. Padding sits after
  // the last word, so a real position never sees a padded one; padded
  // positions only produce outputs the loss ignores. No padding mask needed.
  torch::Tensor h;
  {
    LayerScope layer("self_attention");  // with its residual and norm
    h = norm1_(x + dropout_(self_attention_(x, x, std::nullopt, /*causal=*/true)));
  }
  {
    LayerScope layer("cross_attention");
    h = norm2_(h + dropout_(cross_attention_(h, memory, source_mask)));
  }
  LayerScope layer("ffn");
  return norm3_(h + dropout_(ffn_(h)));
}

TransformerImpl::TransformerImpl(const TransformerConfig& config) : config_(config) {
  embedding_ = register_module(
      "embedding",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(config.vocabulary, config.d_model).padding_idx(config.pad)));
  {
    // Vaswani et al. scale embeddings by √d; N(0, d^-½) keeps them near unit size (fairseq).
    torch::NoGradGuard no_grad;
    embedding_->weight.normal_(0.0, std::pow(static_cast<double>(config.d_model), -0.5));
    embedding_->weight[config.pad].zero_();
  }
  positions_ = register_module("positions", SinusoidalPositions(config.max_length, config.d_model));
  encoder_ = register_module("encoder", torch::nn::ModuleList());
  decoder_ = register_module("decoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.encoder_layers; ++i) encoder_->push_back(EncoderLayer(config));
  for (int64_t i = 0; i < config.decoder_layers; ++i) decoder_->push_back(DecoderLayer(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

std::vector<std::shared_ptr<torch::nn::Module>> TransformerImpl::shard_units() const {
  auto units = encoder_->children();
  for (auto& layer : decoder_->children()) units.push_back(layer);
  return units;
}

torch::Tensor TransformerImpl::embed(const torch::Tensor& ids) {
  return dropout_(positions_(embedding_(ids) * std::sqrt(static_cast<double>(config_.d_model))));
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                       const torch::Tensor& target_input) {
  const auto source_mask = key_padding_mask(source_lengths, source.size(1));
  const ActivationCheckpointing& checkpointing = config_.checkpointing;
  torch::Tensor memory, h;
  {
    LayerScope scope("embedding");  // shared by source, target and the output projection
    memory = embed(source);
  }
  {
    LayerScope scope("encoder");
    for (int64_t i = 0; i < config_.encoder_layers; ++i) {
      auto layer = encoder_->ptr<EncoderLayerImpl>(i);
      memory = run_unit(*layer, [&] {
        return checkpoint_if(checkpointing.checkpoints(i), *layer,
                             [layer](const std::vector<torch::Tensor>& in) { return layer->forward(in[0], in[1]); },
                             {memory, source_mask});
      });
    }
  }
  {
    LayerScope scope("embedding");
    h = embed(target_input);
  }
  {
    LayerScope scope("decoder");
    for (int64_t i = 0; i < config_.decoder_layers; ++i) {
      auto layer = decoder_->ptr<DecoderLayerImpl>(i);
      h = run_unit(*layer, [&] {
        return checkpoint_if(
            checkpointing.checkpoints(config_.encoder_layers + i), *layer,
            [layer](const std::vector<torch::Tensor>& in) { return layer->forward(in[0], in[1], in[2]); },
            {h, memory, source_mask});
      });
    }
  }
  LayerScope scope("embedding");
  return torch::nn::functional::linear(h, embedding_->weight);  // tied output projection, no bias
}

}  // namespace tbd::nn
