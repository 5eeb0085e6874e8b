// GPT-2 (Radford et al. 2019) as OpenAI's release and nanoGPT build it:
// learned token and position embeddings, pre-norm blocks (LayerNorm before
// attention and before the MLP, one more at the end), causal multi-head
// attention, an MLP of 4·d with tanh-approximated GELU, and the output
// projection tied to the token embedding. GPT-2 small: 124,439,808 parameters.
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
#include "tbd/nn/model_flops.h"  // palm_flops_per_token, for gpt's model FLOPs

namespace tbd::nn {

struct GptConfig {  // defaults: GPT-2 small
  int64_t vocabulary = 50257;
  int64_t context = 1024;
  int64_t layers = 12, heads = 12, d_model = 768;
  double dropout = 0.1;
  ActivationCheckpointing checkpointing;  // blocks that re-run their forward in backward
};

class GptBlockImpl : public torch::nn::Module {
 public:
  explicit GptBlockImpl(const GptConfig& c);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  MultiHeadAttention attention{nullptr};
  torch::nn::Linear fc{nullptr}, proj{nullptr};  // MLP d → 4d → d

 private:
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(GptBlock);

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const GptConfig& config);
  torch::Tensor forward(const torch::Tensor& ids);  // [B, T] → logits [B, T, vocabulary]
  // The wrapping units of --sharding full (nn/shard_unit.h), in forward order: the blocks.
  std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const;
  const GptConfig& config() const { return config_; }
  // Parameters outside the position table: the N of the 6N FLOPs per token
  // (the tied token embedding stays in: it is the output projection's GEMM).
  int64_t parameters_without_positions() const;

 private:
  GptConfig config_;
  torch::nn::Embedding token_embedding_{nullptr}, position_embedding_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Gpt);

}  // namespace tbd::nn
