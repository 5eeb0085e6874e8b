// seq2seq: neural machine translation with an attention-based LSTM
// encoder–decoder (Luong et al. 2015) as the TF nmt tutorial trains it on
// IWSLT'15 en–vi: teacher forcing, cross-entropy summed over the real target
// tokens and divided by the sentence count, SGD (lr 1.0) with gradients
// clipped to a global norm of 5, batches of sentences of similar length.
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <algorithm>

#include "tbd/core/rng.h"
#include "tbd/data/parallel_text.h"
#include "tbd/data/synthetic_text.h"
#include "tbd/data/translation_batches.h"
#include "tbd/nn/seq2seq.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::Seq2SeqConfig config_for(Scale scale) {
  nn::Seq2SeqConfig c;  // full: IWSLT'15 en–vi vocabularies, 512 units
  if (scale == Scale::small) c.embedding = c.hidden = 256;
  if (scale == Scale::tiny) {
    c.source_vocabulary = 120;
    c.target_vocabulary = 100;
    c.embedding = c.hidden = 32;
  }
  return c;
}

class Seq2SeqWorkload final : public Recipe<nn::Seq2Seq> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "seq2seq",
        .domain = "machine translation",
        .model = "NMT: 2-layer LSTM encoder-decoder, 512 units, Luong attention, input feeding (Luong et al. 2015)",
        .dataset = "IWSLT'15 en-vi: synthetic sentence pairs, or parallel text (--data DIR with train.SRC, train.TGT)",
        .sample_unit = "target tokens",
        .default_batch = 128,
        .settings = {real_setting("lr", 1.0, 0.0, 1e12, "SGD learning rate (TF nmt)"),
                     real_setting("max_gradient_norm", 5.0, 0.0, 1e12,
                                  "clip gradients to this global norm (0: no clipping)"),
                     real_setting("dropout", 0.2, 0.0, 0.99, "dropout on the input of every LSTM layer"),
                     integer_setting("max_length", 50, 1, 1000, "sentences are cut to this many tokens"),
                     integer_setting("length_bucket", 8, 1, 1024,
                                     "pad each batch's source and target lengths up to a multiple of this "
                                     "(length bucketing: few shapes; 1: exact lengths)"),
                     bool_setting("reverse", false,
                                  "--data: translate the alphabetically second language into the first")},
        .batch_unit = "sentence pairs",
        .variable_shapes = true};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    return count_parameters(*nn::Seq2Seq(config_for(Scale::full)));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    batch_sentences_ = options.batch_size;
    nn::Seq2SeqConfig config = config_for(options.scale);
    config.dropout = settings.real("dropout");
    const int64_t max_length = settings.integer("max_length");
    const int64_t length_bucket = settings.integer("length_bucket");
    if (!options.data_path.empty()) {
      ParallelTextOptions o;
      o.reverse = settings.boolean("reverse");
      o.max_length = max_length;
      o.max_vocabulary = std::max(config.source_vocabulary, config.target_vocabulary);
      ParallelText text = read_parallel_text(options.data_path, o);
      config.source_vocabulary = text.source_vocabulary->size();
      config.target_vocabulary = text.target_vocabulary->size();
      ids_ = {text.target_vocabulary->bos(), text.target_vocabulary->eos(), text.target_vocabulary->pad(),
              text.source_vocabulary->pad(), /*source_eos=*/false,          length_bucket};
      data_description_ = text.source_file + " -> " + text.target_file;
      // One order shared by all ranks (options.seed); each rank reads its own batches of it.
      batches_ = BatchSource(
          std::make_shared<TranslationBatches>(std::make_shared<const SentencePairs>(std::move(text.pairs)), ids_,
                                               LengthBatches::Limit::sentences, batch_sentences_, options.seed,
                                               options.data_workers, Shard{options.rank, options.world_size}),
          [device](const TranslationBatch& b) { return to_training_batch(b, device, SourceLengthsOn::host); });
    } else {
      // Specials take ids 0..3 as in a Vocabulary built without a file.
      const Vocabulary specials(std::vector<std::string>{});
      ids_ = {specials.bos(), specials.eos(), specials.pad(), specials.pad(), /*source_eos=*/false, length_bucket};
      data_description_ = "synthetic";
      batches_ = BatchSource(synthetic_batches(config, max_length, options.data_seed()));
    }
    config_ = config;
    place(nn::Seq2Seq(config), device);
    max_gradient_norm_ = settings.real("max_gradient_norm");
    optimizer_ = make_sgd(model_->parameters(), torch::optim::SGDOptions(settings.real("lr")), options.optimizer_impl);
  }

  Batch next_batch() override {
    Batch batch = Recipe::next_batch();
    sentences_drawn_ += batch.inputs[0].size(0);
    tokens_drawn_ += batch.samples;
    return batch;
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    namespace F = torch::nn::functional;
    const auto logits = model_->forward(batch.inputs[0], batch.inputs[1], batch.inputs[2]);
    // TF nmt's loss: summed over real target tokens, divided by the batch's sentences.
    const auto loss = F::cross_entropy(logits.reshape({-1, logits.size(2)}), batch.targets[0].reshape({-1}),
                                       F::CrossEntropyFuncOptions().ignore_index(ids_.pad).reduction(torch::kSum)) /
                      static_cast<double>(batch.inputs[0].size(0));
    return {loss, {logits}};
  }

  nlohmann::json configuration() const override {
    return {{"source_vocabulary", config_.source_vocabulary},
            {"target_vocabulary", config_.target_vocabulary},
            {"hidden", config_.hidden},
            {"layers", config_.layers},
            {"batch_sentences", batch_sentences_},
            {"data", data_description_},
            // Throughput is in target tokens; sentences/s = tokens/s × this ratio.
            {"sentences_drawn", sentences_drawn_},
            {"target_tokens_drawn", tokens_drawn_},
            {"sentences_per_target_token",
             tokens_drawn_ > 0 ? static_cast<double>(sentences_drawn_) / static_cast<double>(tokens_drawn_) : 0.0}};
  }

 private:
  // Four batches cut from 4·B synthetic pairs sorted by length: from short
  // to long sentences, as bucketing makes them.
  BatchPool synthetic_batches(const nn::Seq2SeqConfig& c, int64_t max_length, uint64_t seed) const {
    const auto pairs =
        synthetic_sentence_pairs(4 * batch_sentences_, c.source_vocabulary, c.target_vocabulary,
                                 /*first_word=*/4, /*median_length=*/17.0, max_length, derive_seed(seed, 0x5e95));
    LengthBatches plan(padded_lengths(pairs, ids_), LengthBatches::Limit::sentences, batch_sentences_, seed);
    std::vector<Batch> pool;
    for (int64_t k = 0; k < plan.batches_per_epoch(); ++k)
      pool.push_back(to_training_batch(make_translation_batch(pairs, plan.batch(k), ids_), device_,
                                       SourceLengthsOn::host));  // packing reads the lengths on the host
    return BatchPool(std::move(pool));
  }

  int64_t batch_sentences_ = 128;
  nn::Seq2SeqConfig config_;
  SpecialIds ids_{1, 2, 3, 3, false};
  std::string data_description_;
  int64_t sentences_drawn_ = 0, tokens_drawn_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_seq2seq() { return std::make_unique<Seq2SeqWorkload>(); }

}  // namespace tbd
