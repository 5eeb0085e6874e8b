// llama: language-model pre-training of Llama 3 (Dubey et al. 2024) with the
// recipe of MLPerf Training's Llama 3.1 8B rules and torchtitan: next-token
// cross-entropy over packed 8192-token sequences, AdamW (β 0.9, 0.95, ε 1e-5)
// with weight decay 0.1 on matrices only (not on RMSNorm weights), gradients
// clipped to a global norm of 1, and a linear warm-up then cosine decay of
// the learning rate, set before every optimizer step.
#include <torch/nn/functional/loss.h>
#include <torch/optim/adamw.h>

#include <fmt/format.h>

#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/data/token_file_windows.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/nn/llama.h"
#include "tbd/nn/llama_memory.h"
#include "tbd/nn/model_flops.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/optim/warmup_cosine.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

// The published size at full scale; small and tiny keep the size's tying
// and rope scaling and shrink every dimension, keeping grouped-query
// attention (fewer key/value heads than query heads).
nn::LlamaConfig config_for(Scale scale, const Settings& settings) {
  nn::LlamaConfig c = nn::llama_published_config(settings.text("size"));
  c.rope_scaling.enabled = settings.boolean("rope_scaling");
  if (scale == Scale::small) {  // about 5 M parameters, 512-token sequences
    c.vocabulary = 8192;
    c.context = 512;
    c.layers = 4, c.d_model = 256, c.heads = 8, c.kv_heads = 2, c.head_dim = 32;
    c.ffn = nn::llama_ffn_width(256, 1.0, 256);  // 768
  }
  if (scale == Scale::tiny) {
    c.vocabulary = 512;
    c.context = 32;
    c.layers = 2, c.d_model = 64, c.heads = 4, c.kv_heads = 2, c.head_dim = 16;
    c.ffn = nn::llama_ffn_width(64, 1.0, 32);  // 192
  }
  return c;
}

std::string size_title(const std::string& size) {
  if (size == "1b") return "Llama 3.2 1B: 16 layers, d 2048, 32 heads (8 kv), FFN 8192, tied output";
  if (size == "3b") return "Llama 3.2 3B: 28 layers, d 3072, 24 heads (8 kv), FFN 8192, tied output";
  if (size == "70b") return "Llama 3.1 70B: 80 layers, d 8192, 64 heads (8 kv), FFN 28672";
  return "Llama 3.1 8B: 32 layers, d 4096, 32 heads (8 kv), FFN 14336";
}

class LlamaWorkload final : public Recipe<nn::Llama> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "llama",
        .domain = "language modelling",
        .model =
            "Llama 3 (Dubey et al. 2024): RMSNorm, grouped-query attention with RoPE, SwiGLU; AdamW, "
            "warm-up + cosine; --set size=1b|3b|8b|70b",
        .dataset =
            "token files (llm.c shards, nanoGPT .bin) or synthetic Zipf-distributed ids over the 128,256-entry "
            "vocabulary",
        .sample_unit = "tokens",
        .default_batch = 1,
        .settings = {choice_setting("size", "8b", {"1b", "3b", "8b", "70b"},
                                    "published size at full scale (Llama 3.2 1B, 3B; Llama 3.1 8B, 70B)"),
                     real_setting("lr", 3e-4, 0.0, 1e12, "peak learning rate (torchtitan's Llama 3 8B)"),
                     integer_setting("warmup_steps", 200, 0, 1000000000, "optimizer steps of linear warm-up"),
                     integer_setting("decay_steps", 800, 0, 1000000000,
                                     "optimizer steps of cosine decay after the warm-up"),
                     real_setting("min_lr_ratio", 0.0, 0.0, 1.0, "the rate the decay ends at, as a share of the peak"),
                     real_setting("weight_decay", 0.1, 0.0, 1.0, "AdamW weight decay on matrices (not norms)"),
                     real_setting("max_gradient_norm", 1.0, 0.0, 1e12,
                                  "clip gradients to this global norm (0: no clipping)"),
                     bool_setting("rope_scaling", true,
                                  "Llama 3.1's rotary frequency scaling (factor 8 for 8b and 70b, 32 for 1b and 3b)")},
        .cuda_graph_refusal =
            "sets its learning rate on the host before every optimizer step (linear warm-up, cosine decay), which "
            "a graph would freeze at the captured step's rate",
        .batch_unit = "sequences",
        .checkpointable_blocks = true};
    return info;
  }

  std::string model_title(const Settings& settings) const override {
    return size_title(settings.text("size")) + " (Dubey et al. 2024), AdamW, warm-up + cosine";
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    return nn::llama_parameter_count(config_for(Scale::full, settings));
  }

  std::optional<MemoryPlan> memory_plan(const RunOptions& options, const Settings& settings) const override {
    nn::LlamaConfig config = config_for(options.scale, settings);
    config.checkpointing = options.activation_checkpointing;
    return nn::llama_memory_plan(config, {.batch = options.batch_size,
                                          .grad_accum = options.grad_accum,
                                          .precision = options.precision,
                                          .fused_rms_norm = options.device.starts_with("cuda"),
                                          .ranks = options.world_size,
                                          .sharding = options.sharding,
                                          .bucket_bytes = options.bucket_mb * 1024 * 1024});
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    batch_size_ = options.batch_size;
    size_ = settings.text("size");
    config_ = config_for(options.scale, settings);
    config_.checkpointing = options.activation_checkpointing;
    if (device.is_cpu()) refuse_what_cannot_fit();
    if (!options.data_path.empty()) {
      // Pre-tokenized files only (llm.c shards, nanoGPT .bin): Llama 3's
      // tokenizer is not byte-level, so raw text has no faithful reading.
      if (std::filesystem::is_regular_file(options.data_path) && !is_token_data(options.data_path))
        throw UsageError("llama --data reads token files (llm.c shards or nanoGPT's headerless .bin); '" +
                         options.data_path +
                         "' is neither: tokenize it first (llm.c's or nanoGPT's prepare scripts) or run without "
                         "--data");
      auto stream = std::make_shared<const TokenStream>(token_files(options.data_path), config_.vocabulary);
      data_description_ = options.data_path + " (" + stream->description() + ")";
      batches_ = read_dataset<TokenFileWindows>(device, std::move(stream), batch_size_, config_.context, options.seed,
                                                options.data_workers, Shard{options.rank, options.world_size});
    } else {
      batches_ = BatchSource(zipf_token_pool(derive_seed(options.data_seed(), 0x11a3), config_.vocabulary, batch_size_,
                                             config_.context, device));
      data_description_ = "synthetic";
    }
    place(nn::Llama(config_), device);
    max_gradient_norm_ = settings.real("max_gradient_norm");
    schedule_ = {settings.real("lr"), settings.integer("warmup_steps"), settings.integer("decay_steps"),
                 settings.real("min_lr_ratio")};
    // Decay matrices (projections, embedding), not the RMSNorm weights.
    std::vector<torch::Tensor> decay, no_decay;
    for (const auto& p : model_->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
    const auto defaults = torch::optim::AdamWOptions(schedule_.at(1)).betas({0.9, 0.95}).eps(1e-5);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(defaults).weight_decay(settings.real("weight_decay"))));
    groups.emplace_back(
        no_decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(defaults).weight_decay(0.0)));
    optimizer_ = make_adamw(groups, defaults, options.optimizer_impl);
  }

  // The schedule sets the learning rate of every optimizer step (one per
  // iteration, however many micro-batches --grad-accum gathers into it).
  StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) override {
    ++steps_;
    set_learning_rate(*optimizer_, schedule_.at(steps_));
    return Recipe::step(micro_batches, phases);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    const auto logits = model_->forward(batch.inputs[0]);
    return {torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.targets[0].reshape({-1})),
            {logits}};
  }

  nlohmann::json configuration() const override {
    // N: the parameters that multiply activations. An untied input embedding
    // is a table lookup (no FLOPs; torchtitan leaves it out too); a tied one
    // is the output projection's matrix and stays, as in gpt.
    const int64_t all = nn::llama_parameter_count(config_);
    const int64_t n = all - (config_.tied ? 0 : config_.vocabulary * config_.d_model);
    const int64_t per_token =
        nn::palm_flops_per_token(n, config_.layers, config_.heads, config_.head_dim, config_.context);
    return {{"size", size_},
            {"vocabulary", config_.vocabulary},
            {"context", config_.context},
            {"layers", config_.layers},
            {"d_model", config_.d_model},
            {"heads", config_.heads},
            {"kv_heads", config_.kv_heads},
            {"head_dim", config_.head_dim},
            {"ffn", config_.ffn},
            {"tied_output", config_.tied},
            {"rope",
             {{"theta", config_.rope_theta},
              {"scaling", config_.rope_scaling.enabled ? "llama3" : "none"},
              {"factor", config_.rope_scaling.factor},
              {"low_freq_factor", config_.rope_scaling.low_freq_factor},
              {"high_freq_factor", config_.rope_scaling.high_freq_factor},
              {"original_max_position_embeddings", config_.rope_scaling.original_context}}},
            {"learning_rate",
             {{"schedule", "linear warm-up to peak, cosine decay to min_lr_ratio x peak, per optimizer step"},
              {"peak", schedule_.peak},
              {"warmup_steps", schedule_.warmup_steps},
              {"decay_steps", schedule_.decay_steps},
              {"min_lr_ratio", schedule_.min_ratio},
              {"steps", steps_},
              {"last", steps_ > 0 ? schedule_.at(steps_) : 0.0}}},
            {"data", data_description_},
            {"model_flops",
             {{"definition",
               "PaLM (Chowdhery et al. 2022, app. B): 6N + 12*L*H*Q*T per token, training; N without the untied "
               "input embedding (a lookup); H counts query heads (grouped-query attention shares keys and values, "
               "not the score and value products)"},
              {"N_parameters_in_matmuls", n},
              {"per_token", per_token},
              {"per_iteration", per_token * batch_size_ * config_.context}}}};
  }

 private:
  // The full sizes on a CPU: fp32 weights, gradients and AdamW's two moments
  // are 16 bytes per parameter (8b: 128 GB). Past the memory available the
  // kernel's OOM killer would end the run (and maybe others) without a word:
  // refuse first, naming the sizes that fit.
  void refuse_what_cannot_fit() const {
    const int64_t available = local_capacity().available_bytes;
    const int64_t parameters = nn::llama_parameter_count(config_);
    const double need = 16.0 * static_cast<double>(parameters);
    if (available <= 0 || need <= static_cast<double>(available)) return;
    throw Error(fmt::format(
        "llama {} needs {:.1f} GB for its fp32 weights, gradients and AdamW moments (16 bytes x {} parameters), "
        "more than the {:.1f} GB of memory available here: choose a smaller --set size, --scale small or tiny, "
        "or a machine with more memory",
        size_, need / 1e9, parameters, static_cast<double>(available) / 1e9));
  }

  int64_t batch_size_ = 1, steps_ = 0;
  std::string size_ = "8b";
  std::string data_description_;
  nn::LlamaConfig config_;
  WarmupCosine schedule_;
};

}  // namespace

std::unique_ptr<Workload> make_llama() { return std::make_unique<LlamaWorkload>(); }

}  // namespace tbd
