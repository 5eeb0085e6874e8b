// gpt: language-model pre-training of GPT-2 small (Radford et al. 2019) the
// way nanoGPT reproduces it: next-token cross-entropy over every position of
// 1024-token windows, AdamW (β 0.9, 0.95) with weight decay 0.1 on weight
// matrices and embeddings only (not on biases or LayerNorm gains), gradients
// clipped to a global norm of 1.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adamw.h>

#include "tbd/core/rng.h"
#include "tbd/data/byte_text.h"
#include "tbd/data/token_file_windows.h"
#include "tbd/nn/gpt.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::GptConfig config_for(Scale scale) {
  nn::GptConfig c;  // full: GPT-2 small
  if (scale == Scale::small) {
    c.context = 256;
    c.layers = 6;
    c.heads = 6;
    c.d_model = 384;
  }
  if (scale == Scale::tiny) {
    c.vocabulary = 512;  // still room for 256 byte tokens and end-of-text
    c.context = 32;
    c.layers = 2;
    c.heads = 2;
    c.d_model = 32;
  }
  return c;
}

class GptWorkload final : public Recipe<nn::Gpt> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "gpt",
        .domain = "language modelling",
        .model = "GPT-2 small: 12 layers, d 768, 12 heads, context 1024, tied embeddings (Radford et al. 2019), AdamW",
        .dataset =
            "synthetic Zipf-distributed tokens, GPT-2 token files (llm.c shards, nanoGPT .bin), or plain "
            "UTF-8 text as byte tokens (--data FILE or DIR)",
        .sample_unit = "tokens",
        .default_batch = 8,
        .settings = {real_setting("lr", 6e-4, 0.0, 1e12, "AdamW learning rate (nanoGPT's GPT-2 peak)"),
                     real_setting("weight_decay", 0.1, 0.0, 1.0, "AdamW weight decay on matrices and embeddings"),
                     real_setting("beta2", 0.95, 0.0, 0.999999, "AdamW second-moment decay"),
                     real_setting("dropout", 0.1, 0.0, 0.99, "dropout on embeddings, attention and residual branches"),
                     real_setting("max_gradient_norm", 1.0, 0.0, 1e12,
                                  "clip gradients to this global norm (0: no clipping)")},
        .batch_unit = "sequences",
        .checkpointable_blocks = true};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    return count_parameters(*nn::Gpt(config_for(Scale::full)));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    batch_size_ = options.batch_size;
    config_ = config_for(options.scale);
    config_.dropout = settings.real("dropout");
    config_.checkpointing = options.activation_checkpointing;
    const auto end_of_text = static_cast<int32_t>(config_.vocabulary - 1);  // GPT-2: 50256 <|endoftext|>
    const Shard shard{options.rank, options.world_size};
    if (!options.data_path.empty() && is_token_data(options.data_path)) {
      // Already tokenized (llm.c shards, nanoGPT .bin): ids checked against this scale's vocabulary.
      auto stream = std::make_shared<const TokenStream>(token_files(options.data_path), config_.vocabulary);
      data_description_ = options.data_path + " (" + stream->description() + ")";
      batches_ = read_dataset<TokenFileWindows>(device, std::move(stream), batch_size_, config_.context, options.seed,
                                                options.data_workers, shard);
    } else if (!options.data_path.empty()) {
      auto text = std::make_shared<const ByteText>(options.data_path, end_of_text);
      // One order shared by all ranks (options.seed); each rank reads its own batches of it.
      batches_ = read_dataset<TokenWindows>(device, std::move(text), batch_size_, config_.context, options.seed,
                                            options.data_workers, shard);
      data_description_ = options.data_path + " (byte tokens)";
    } else {
      batches_ = BatchSource(zipf_token_pool(derive_seed(options.data_seed(), 0x69f7), config_.vocabulary, batch_size_,
                                             config_.context, device));
      data_description_ = "synthetic";
    }
    place(nn::Gpt(config_), device);
    max_gradient_norm_ = settings.real("max_gradient_norm");
    // Decay matrices (projections, embeddings), not vectors (biases, LayerNorm).
    std::vector<torch::Tensor> decay, no_decay;
    for (const auto& p : model_->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
    const auto defaults = torch::optim::AdamWOptions(settings.real("lr")).betas({0.9, settings.real("beta2")});
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(defaults).weight_decay(settings.real("weight_decay"))));
    groups.emplace_back(
        no_decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(defaults).weight_decay(0.0)));
    optimizer_ = make_adamw(groups, defaults, options.optimizer_impl);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    const auto logits = model_->forward(batch.inputs[0]);
    return {torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.targets[0].reshape({-1})),
            {logits}};
  }

  nlohmann::json configuration() const override {
    const int64_t n = model_ ? model_->parameters_without_positions() : 0;
    const int64_t head_size = config_.d_model / config_.heads;
    const int64_t per_token = nn::palm_flops_per_token(n, config_.layers, config_.heads, head_size, config_.context);
    return {{"vocabulary", config_.vocabulary},
            {"context", config_.context},
            {"layers", config_.layers},
            {"heads", config_.heads},
            {"d_model", config_.d_model},
            {"data", data_description_},
            {"model_flops",
             {{"definition", "PaLM (Chowdhery et al. 2022, app. B): 6N + 12*L*H*Q*T per token, training"},
              {"N_parameters_without_position_embedding", n},
              {"per_token", per_token},
              {"per_iteration", per_token * batch_size_ * config_.context}}}};
  }

 private:
  int64_t batch_size_ = 8;
  nn::GptConfig config_;
  std::string data_description_;
};

}  // namespace

std::unique_ptr<Workload> make_gpt() { return std::make_unique<GptWorkload>(); }

}  // namespace tbd
