// transformer: machine translation with Transformer base (Vaswani et al.
// 2017): shared vocabulary with tied embeddings, label-smoothed
// cross-entropy (ε 0.1) averaged over real target tokens, Adam (β 0.9, 0.98,
// ε 1e-9) with the paper's schedule lr = d^-½ · min(step^-½, step · warmup^-1.5),
// batches formed by token count (--batch-size counts tokens, padding included).
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <cmath>

#include "tbd/core/rng.h"
#include "tbd/data/length_bucket.h"
#include "tbd/data/parallel_text.h"
#include "tbd/data/synthetic_text.h"
#include "tbd/data/translation_batches.h"
#include "tbd/nn/transformer.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::TransformerConfig config_for(Scale scale) {
  nn::TransformerConfig c;  // full: Transformer base, 32k shared vocabulary
  if (scale == Scale::small) {
    c.d_model = 256;
    c.heads = 4;
    c.ffn = 1024;
    c.encoder_layers = c.decoder_layers = 3;
  }
  if (scale == Scale::tiny) {
    c.vocabulary = 200;
    c.d_model = 32;
    c.heads = 4;
    c.ffn = 64;
    c.encoder_layers = c.decoder_layers = 2;
  }
  return c;
}

class TransformerWorkload final : public Recipe<nn::Transformer> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "transformer",
        .domain = "machine translation",
        .model =
            "Transformer base: 6+6 layers, d 512, 8 heads, FFN 2048, tied shared embeddings (Vaswani et al. "
            "2017); --batch-size counts tokens",
        .dataset = "WMT-like: synthetic sentence pairs, or parallel text (--data DIR with train.SRC, train.TGT)",
        .sample_unit = "target tokens",
        .default_batch = 2048,
        .settings = {integer_setting("warmup_steps", 4000, 1, 100000000, "steps of linear learning-rate warm-up"),
                     real_setting("lr_factor", 1.0, 0.0, 1e12, "multiplier of the inverse-square-root schedule"),
                     real_setting("label_smoothing", 0.1, 0.0, 0.99, "label smoothing of the cross-entropy"),
                     real_setting("dropout", 0.1, 0.0, 0.99, "dropout on sub-layer outputs and embeddings"),
                     integer_setting("max_length", 256, 1, 100000, "sentences are cut to this many tokens"),
                     integer_setting("length_bucket", 8, 1, 1024,
                                     "pad each batch's source and target lengths up to a multiple of this "
                                     "(length bucketing: few shapes; 1: exact lengths)"),
                     bool_setting("reverse", false,
                                  "--data: translate the alphabetically second language into the first")},
        .batch_unit = "tokens",
        .variable_shapes = true,
        .checkpointable_blocks = true};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    return count_parameters(*nn::Transformer(config_for(Scale::full)));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    batch_tokens_ = options.batch_size;
    nn::TransformerConfig config = config_for(options.scale);
    config.dropout = settings.real("dropout");
    config.checkpointing = options.activation_checkpointing;
    const int64_t max_length = settings.integer("max_length");
    const int64_t length_bucket = settings.integer("length_bucket");
    // Room for the added <s> or </s>, and for the padding a length bucket
    // adds beyond it (max_length 256 + 1 is padded to 264 with buckets of 8).
    config.max_length = bucketed_length(max_length + 1, length_bucket);
    if (!options.data_path.empty()) {
      ParallelTextOptions o;
      o.shared_vocabulary = true;
      o.reverse = settings.boolean("reverse");
      o.max_length = max_length;
      o.max_vocabulary = config.vocabulary;
      ParallelText text = read_parallel_text(options.data_path, o);
      const Vocabulary& v = *text.source_vocabulary;
      config.vocabulary = v.size();
      ids_ = {v.bos(), v.eos(), v.pad(), v.pad(), /*source_eos=*/true, length_bucket};
      data_description_ = text.source_file + " -> " + text.target_file;
      // One order shared by all ranks (options.seed); each rank reads its own batches of it.
      batches_ = BatchSource(
          std::make_shared<TranslationBatches>(std::make_shared<const SentencePairs>(std::move(text.pairs)), ids_,
                                               LengthBatches::Limit::tokens, batch_tokens_, options.seed,
                                               options.data_workers, Shard{options.rank, options.world_size}),
          [device](const TranslationBatch& b) { return to_training_batch(b, device, SourceLengthsOn::device); });
    } else {
      const Vocabulary specials(std::vector<std::string>{});
      ids_ = {specials.bos(), specials.eos(), specials.pad(), specials.pad(), /*source_eos=*/true, length_bucket};
      data_description_ = "synthetic";
      batches_ = BatchSource(synthetic_batches(config.vocabulary, max_length, options.data_seed()));
    }
    config.pad = ids_.pad;
    config_ = config;
    place(nn::Transformer(config), device);
    warmup_steps_ = settings.integer("warmup_steps");
    lr_factor_ = settings.real("lr_factor");
    label_smoothing_ = settings.real("label_smoothing");
    optimizer_ =
        make_adam(model_->parameters(), torch::optim::AdamOptions(learning_rate(1)).betas({0.9, 0.98}).eps(1e-9),
                  options.optimizer_impl);
  }

  // The paper's schedule sets the learning rate of every optimizer step
  // (once for all the micro-batches of an accumulated one).
  StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) override {
    ++steps_;
    for (auto& group : optimizer_->param_groups())
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(learning_rate(steps_));
    return Recipe::step(micro_batches, phases);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    namespace F = torch::nn::functional;
    const auto logits = model_->forward(batch.inputs[0], batch.inputs[1], batch.inputs[2]);
    const auto loss =
        F::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.targets[0].reshape({-1}),
                         F::CrossEntropyFuncOptions().ignore_index(ids_.pad).label_smoothing(label_smoothing_));
    return {loss, {logits}};
  }

  nlohmann::json configuration() const override {
    return {{"vocabulary", config_.vocabulary},
            {"d_model", config_.d_model},
            {"layers", {config_.encoder_layers, config_.decoder_layers}},
            {"batch_tokens", batch_tokens_},
            {"batch_limit", "sentences x longest padded length <= batch_tokens"},
            {"warmup_steps", warmup_steps_},
            {"steps", steps_},
            {"learning_rate_last", learning_rate(std::max<int64_t>(steps_, 1))},
            {"data", data_description_}};
  }

 private:
  double learning_rate(int64_t step) const {
    const double s = static_cast<double>(step), w = static_cast<double>(warmup_steps_);
    return lr_factor_ * std::pow(static_cast<double>(config_.d_model), -0.5) *
           std::min(std::pow(s, -0.5), s * std::pow(w, -1.5));
  }

  // Synthetic pairs of WMT-like lengths (median 25 sub-words) holding about
  // four batches' tokens, cut into token-count batches as real data is.
  BatchPool synthetic_batches(int64_t vocabulary, int64_t max_length, uint64_t seed) const {
    const int64_t pairs_count = std::max<int64_t>(4, 4 * batch_tokens_ / 30);
    const auto pairs = synthetic_sentence_pairs(pairs_count, vocabulary, vocabulary, /*first_word=*/4,
                                                /*median_length=*/25.0, max_length, derive_seed(seed, 0x7f0));
    LengthBatches plan(padded_lengths(pairs, ids_), LengthBatches::Limit::tokens, batch_tokens_, seed);
    std::vector<Batch> pool;
    for (int64_t k = 0; k < plan.batches_per_epoch(); ++k)
      pool.push_back(
          to_training_batch(make_translation_batch(pairs, plan.batch(k), ids_), device_, SourceLengthsOn::device));
    return BatchPool(std::move(pool));
  }

  int64_t batch_tokens_ = 2048;
  nn::TransformerConfig config_;
  SpecialIds ids_{1, 2, 3, 3, true};
  int64_t warmup_steps_ = 4000, steps_ = 0;
  double lr_factor_ = 1.0, label_smoothing_ = 0.1;
  std::string data_description_;
};

}  // namespace

std::unique_ptr<Workload> make_transformer() { return std::make_unique<TransformerWorkload>(); }

}  // namespace tbd
