#include "tbd/nn/gpt.h"

#include <torch/torch.h>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/core/parameter_set.h"
#include "tbd/nn/activation_checkpoint.h"
#include "tbd/nn/layer_scope.h"
#include "tbd/nn/linear.h"
#include "tbd/nn/shard_unit.h"

namespace tbd::nn {
namespace {

torch::nn::LayerNorm layer_norm(int64_t d) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(1e-5)); }

// GPT-2's initialisation: N(0, 0.02) weights, zero biases; projections that
// end a residual branch get 0.02/√(2L) so the residual stream does not grow
// with depth.
void init_linear(torch::nn::Linear& l, double std) {
  torch::NoGradGuard no_grad;
  l->weight.normal_(0.0, std);
  l->bias.zero_();
}

}  // namespace

GptBlockImpl::GptBlockImpl(const GptConfig& c) {
  ln1 = register_module("ln1", layer_norm(c.d_model));
  attention = register_module("attention", MultiHeadAttention(c.d_model, c.heads, c.dropout, AttentionKind::self));
  ln2 = register_module("ln2", layer_norm(c.d_model));
  fc = register_module("fc", torch::nn::Linear(c.d_model, 4 * c.d_model));
  proj = register_module("proj", torch::nn::Linear(4 * c.d_model, c.d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
  for (auto* l : {&attention->qkv, &fc}) init_linear(*l, 0.02);
  for (auto* l : {&attention->out, &proj}) init_linear(*l, residual_std);
}

torch::Tensor GptBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor y;
  {
    LayerScope layer("attention");  // ln1, attention, residual
    auto h = ln1(x);
    y = x + dropout_(attention(h, h, std::nullopt, /*causal=*/true));
  }
  LayerScope layer("mlp");  // ln2, fc, gelu, proj, residual
  return y + dropout_(linear(proj, torch::gelu(linear(fc, ln2(y)), "tanh")));
}

GptImpl::GptImpl(const GptConfig& config) : config_(config) {
  token_embedding_ = register_module("token_embedding", torch::nn::Embedding(config.vocabulary, config.d_model));
  position_embedding_ = register_module("position_embedding", torch::nn::Embedding(config.context, config.d_model));
  {
    torch::NoGradGuard no_grad;
    token_embedding_->weight.normal_(0.0, 0.02);
    position_embedding_->weight.normal_(0.0, 0.02);
  }
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) blocks_->push_back(GptBlock(config));
  ln_f_ = register_module("ln_f", layer_norm(config.d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor GptImpl::forward(const torch::Tensor& ids) {
  const int64_t t = ids.size(1);
  if (t > config_.context)
    throw Error("sequence of " + std::to_string(t) + " tokens exceeds the context of " +
                std::to_string(config_.context));
  torch::Tensor x;
  {
    LayerScope layer("embedding");  // token and position embeddings
    auto positions = torch::arange(t, ids.options());
    x = dropout_(token_embedding_(ids) + position_embedding_(positions));
  }
  {
    LayerScope layer("blocks");
    for (int64_t i = 0; i < config_.layers; ++i) {
      auto block = blocks_->ptr<GptBlockImpl>(i);
      x = run_unit(*block, [&] {
        return checkpoint_if(config_.checkpointing.checkpoints(i), *block,
                             [block](const std::vector<torch::Tensor>& in) { return block->forward(in[0]); }, {x});
      });
    }
  }
  LayerScope layer("head");                                                  // ln_f and the tied output projection
  return torch::nn::functional::linear(ln_f_(x), token_embedding_->weight);  // tied, no bias
}

std::vector<std::shared_ptr<torch::nn::Module>> GptImpl::shard_units() const { return blocks_->children(); }

int64_t GptImpl::parameters_without_positions() const {
  return count_parameters(*this) - position_embedding_->weight.numel();
}

}  // namespace tbd::nn
