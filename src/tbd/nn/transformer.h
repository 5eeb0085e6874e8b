// Transformer encoder–decoder for translation (Vaswani et al. 2017):
// post-norm layers (LayerNorm after each residual sum, as published),
// sinusoidal positions, one embedding matrix shared by source, target and
// the output projection (the paper's three-way tying with a shared vocabulary).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "tbd/core/options.h"
#include "tbd/nn/attention.h"
#include "tbd/nn/positional_encoding.h"

namespace tbd::nn {

struct TransformerConfig {  // defaults: Transformer base
  int64_t vocabulary = 32000;
  int64_t d_model = 512, heads = 8, ffn = 2048;
  int64_t encoder_layers = 6, decoder_layers = 6;
  double dropout = 0.1;       // on each sub-layer output and on embeddings + positions
  int64_t max_length = 1024;  // rows of the position table
  int64_t pad = 0;            // id of <pad>: its embedding stays zero
  // Layers that re-run their forward in backward, counted over the encoder's
  // layers and then the decoder's (one stack of blocks, in forward order).
  ActivationCheckpointing checkpointing;
};

// Position-wise feed-forward network: Linear(d, ffn) → ReLU → Linear(ffn, d).
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(int64_t d_model, int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear fc{nullptr}, proj{nullptr};
};
TORCH_MODULE(FeedForward);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const TransformerConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& source_mask);

 private:
  MultiHeadAttention self_attention_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const TransformerConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory, const torch::Tensor& source_mask);

 private:
  MultiHeadAttention self_attention_{nullptr}, cross_attention_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(DecoderLayer);

class TransformerImpl : public torch::nn::Module {
 public:
  explicit TransformerImpl(const TransformerConfig& config);
  // source [B, S] ids, source_lengths [B], target_input [B, T] → logits [B, T, vocabulary]
  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input);
  // The wrapping units of --sharding full (nn/shard_unit.h), in forward order: the encoder layers, then the decoder
  // layers.
  std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const;

 private:
  torch::Tensor embed(const torch::Tensor& ids);
  TransformerConfig config_;
  torch::nn::Embedding embedding_{nullptr};
  SinusoidalPositions positions_{nullptr};
  torch::nn::ModuleList encoder_, decoder_;
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace tbd::nn
