// dlrm: DLRM (Naumov et al. 2019) and the recommendation models at
// production shape built the same way (--set config=...):
//   kaggle  facebookresearch/dlrm's Criteo Kaggle configuration: 26 one-hot
//           tables of dimension 16, bottom MLP 13-512-256-64-16, dot
//           interaction, top MLP 367-512-256-1, SGD on sparse gradients;
//   dcnv2   MLPerf Training's DLRMv2 (TorchRec reference): 26 multi-hot
//           tables of dimension 128, bottom 13-512-256-128, DCN-v2 cross
//           network (3 layers, rank 512), top 3456-1024-1024-512-256-1, Adagrad;
//   rm1-3   DeepRecSys's RM classes (Gupta et al. HPCA 2020): concat
//           interaction, fixed lookups per table, SGD.
// Binary cross-entropy on one logit throughout.
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <new>

#include "tbd/core/error.h"
#include "tbd/core/number_format.h"
#include "tbd/core/rng.h"
#include "tbd/data/criteo.h"
#include "tbd/data/embedding_bags.h"
#include "tbd/data/multi_hot_criteo.h"
#include "tbd/dist/sharded_embedding_bags.h"
#include "tbd/nn/dlrm.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/dlrm_memory_plan.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

// Small keeps each configuration's network and caps its tables at 100,000
// rows; tiny caps them at 1,000 and narrows every layer (dimension 8, one
// hidden layer of 32 in each MLP, cross rank 8) on the same structure.
nn::DLRMConfig config_for(Scale scale, const std::string& name, int64_t max_rows) {
  nn::DLRMConfig c = nn::dlrm_config(name);
  int64_t cap = max_rows;
  if (scale == Scale::small) {
    cap = cap > 0 ? std::min<int64_t>(cap, 100'000) : 100'000;
  } else if (scale == Scale::tiny) {
    cap = cap > 0 ? std::min<int64_t>(cap, 1'000) : 1'000;
    c.embedding_dim = 8;
    c.bottom = {32};
    c.top = {32};
    c.cross_rank = 8;
  }
  if (cap > 0)
    for (auto& rows : c.table_sizes) rows = std::min(rows, cap);
  return c;
}

bool adagrad(const std::string& config) { return config == "dcnv2"; }

// The reference learning rates: facebookresearch/dlrm's Kaggle run SGD 0.1,
// its code's default SGD 0.01 for the RM classes (DeepRecSys runs that code
// with its defaults), MLPerf DLRMv2's Adagrad 0.005.
double reference_lr(const std::string& config) {
  if (adagrad(config)) return 0.005;
  return config == "kaggle" ? 0.1 : 0.01;
}

// The most table bytes any rank holds under a placement: fp32 rows, with
// Adagrad's accumulators (as large as the tables; SGD keeps no state).
double largest_table_share(const nn::DLRMConfig& c, bool with_adagrad, EmbeddingSharding how, int ranks) {
  int64_t most = 0;
  for (int r = 0; r < ranks; ++r) most = std::max(most, total_rows(rows_held(c.table_sizes, how, r, ranks)));
  return static_cast<double>(most) * static_cast<double>(c.embedding_dim) * 4.0 * (with_adagrad ? 2 : 1);
}

// --memory-limit: tables that would not fit one rank are refused before any
// is allocated, with the placement and rank count where they would.
void refuse_tables_beyond_limit(const nn::DLRMConfig& c, const std::string& name, const RunOptions& o) {
  if (o.memory_limit_bytes <= 0) return;
  const double limit = static_cast<double>(o.memory_limit_bytes);
  const int ranks = std::max(1, o.world_size);
  const bool state = adagrad(name);
  const double need = largest_table_share(c, state, o.embedding_sharding, ranks);
  if (need <= limit) return;
  int fit = 0;
  for (int n = ranks + 1; n <= 4096 && fit == 0; n = n < 64 ? n + 1 : n * 2)
    if (largest_table_share(c, state, EmbeddingSharding::row, n) <= limit) fit = n;
  const std::string what = fmt::format(
      "dlrm config={}: the embedding tables {} need {}{} on each rank, over --memory-limit {}", name,
      o.embedding_sharding == EmbeddingSharding::replicate
          ? std::string("replicated")
          : fmt::format("placed by {} over {} rank{}", to_string(o.embedding_sharding), ranks, ranks == 1 ? "" : "s"),
      format_bytes(need), state ? " (fp32 weights and Adagrad's accumulators)" : " (fp32 weights)",
      format_bytes(limit));
  const std::string where = fit > 0
                                ? fmt::format(
                                      "place them across ranks: --nproc {} --embedding-sharding row holds {} per rank "
                                      "(table: at most {})",
                                      fit, format_bytes(largest_table_share(c, state, EmbeddingSharding::row, fit)),
                                      format_bytes(largest_table_share(c, state, EmbeddingSharding::table, fit)))
                                : std::string("no rank count up to 4096 fits them");
  throw UsageError(what + "; " + where + ", or cap the tables with --set max_rows=N");
}

class DLRM final : public Recipe<nn::DLRM> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "dlrm",
        .domain = "recommendation",
        .model =
            "DLRM, Criteo Kaggle config: 26 tables x 16, MLPs 13-512-256-64-16 / 512-256-1, dot "
            "interaction, SGD (Naumov et al. 2019); --set config=dcnv2|rm1|rm2|rm3 for MLPerf's DLRM-DCNv2 and "
            "DeepRecSys's RM classes",
        .dataset =
            "Criteo click logs: synthetic with power-law ids, a Criteo TSV (--data train.txt) or MLPerf DLRMv2's "
            "multi-hot days (--data DIR of day_N_{dense,labels}.npy, day_N_sparse_multi_hot.npz)",
        .sample_unit = "samples",
        .default_batch = 128,
        .settings = {choice_setting("config", "kaggle", nn::dlrm_config_names(),
                                    "published configuration: kaggle (facebookresearch/dlrm), dcnv2 (MLPerf "
                                    "Training DLRMv2), rm1, rm2, rm3 (DeepRecSys)"),
                     real_setting("lr", 0.0, 0.0, 1e6,
                                  "learning rate (0: the configuration's reference: kaggle SGD 0.1, rm1-3 SGD 0.01, "
                                  "dcnv2 Adagrad 0.005)"),
                     real_setting("lookup_skew", 1.0, 0.0, 10.0,
                                  "exponent s of the synthetic ids' power law, P(rank r) ∝ r^-s (0: uniform, "
                                  "as MLPerf's and TorchRec's random data)"),
                     integer_setting("max_rows", 0, 0, int64_t{1} << 40,
                                     "cap every embedding table at this many rows (0: the configuration's sizes); "
                                     "ids are taken modulo the table size")},
        .sharding_refusal =
            "its embedding tables get sparse gradients (the rows a batch looked up), which ZeRO's flat slices do "
            "not cut; run it with --sharding none (its tables are all-reduced sparse), or place them across ranks "
            "with --embedding-sharding table or row",
        .cuda_graph_refusal =
            "updates its embedding tables from sparse gradients, whose count of distinct rows the data decides "
            "(Adagrad's update coalesces them and reads that count on the host); tbd captures dense-gradient steps "
            "only",
        .shardable_embedding_tables = true};
    return info;
  }

  std::string model_title(const Settings& settings) const override {
    const std::string& name = settings.text("config");
    if (name == "kaggle") return info().model;
    if (name == "dcnv2")
      return "DLRM-DCNv2 (MLPerf Training DLRMv2): 26 multi-hot tables x 128, MLPs 13-512-256-128 / "
             "1024-1024-512-256-1, DCN-v2 cross network 3 x rank 512, Adagrad";
    const nn::DLRMConfig c = nn::dlrm_config(name);
    return "DLRM " + name + " (DeepRecSys, Gupta et al. 2020): " + std::to_string(c.table_sizes.size()) + " tables x " +
           std::to_string(c.table_sizes[0]) + " rows x " + std::to_string(c.embedding_dim) + ", " +
           std::to_string(c.lookups[0]) + " lookups each, concat interaction, SGD";
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    // Closed form: the full tables hold 0.5–26 billion parameters, too many
    // to allocate for a listing.
    return nn::dlrm_parameters(config_for(Scale::full, settings.text("config"), settings.integer("max_rows")));
  }

  std::vector<std::pair<std::string, int64_t>> parameter_parts(const Settings& settings) const override {
    const auto c = config_for(Scale::full, settings.text("config"), settings.integer("max_rows"));
    return {{"embedding", nn::dlrm_embedding_parameters(c)}, {"dense", nn::dlrm_dense_parameters(c)}};
  }

  std::optional<MemoryPlan> memory_plan(const RunOptions& options, const Settings& settings) const override {
    const std::string& name = settings.text("config");
    return dlrm_memory_plan(config_for(options.scale, name, settings.integer("max_rows")),
                            {.batch = options.batch_size,
                             .grad_accum = options.grad_accum,
                             .ranks = std::max(1, options.world_size),
                             .placement = options.embedding_sharding,
                             .adagrad = adagrad(name)});
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    name_ = settings.text("config");
    max_rows_ = settings.integer("max_rows");
    skew_ = settings.real("lookup_skew");
    lr_ = settings.real("lr") > 0 ? settings.real("lr") : reference_lr(name_);
    config_ = config_for(options.scale, name_, max_rows_);
    if (!options.data_path.empty() && config_.dense_features != kCriteoDense)
      throw UsageError("dlrm config=" + name_ +
                       " has no dataset: DeepRecSys defines its RM classes on synthetic lookups only, so --data "
                       "(a Criteo TSV, 13 dense and 26 categorical features) fits config=kaggle or dcnv2; drop "
                       "--data to train " +
                       name_ + " on synthetic lookups");
    config_.table_seed = derive_seed(options.seed, 0x7ab1e);
    refuse_tables_beyond_limit(config_, name_, options);
    embedding_sharding_ = options.embedding_sharding;
    try {
      if (embedding_sharding_ == EmbeddingSharding::replicate) {
        place(nn::DLRM(config_), device);
      } else {
        // This rank's tables or rows only; the model pools through them.
        if (group_ == nullptr) throw Error("--embedding-sharding without a process group (a bug in tbd)");
        nn::DLRMConfig dense_only = config_;
        dense_only.local_tables = false;
        nn::DLRM model(dense_only);
        sharded_ = model->register_module("tables", ShardedEmbeddingBags(config_, embedding_sharding_, *group_));
        model->use_pooled_embeddings(sharded_.ptr());
        place(model, device);
      }
    } catch (const std::exception& e) {
      const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
                       dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                       std::string(e.what()).find("can't allocate memory") != std::string::npos;
      if (!oom) throw;
      throw Error("out of memory allocating DLRM's embedding tables (" +
                  std::to_string(nn::dlrm_parameters(config_) * 4 / (1 << 20)) + " MiB of fp32 weights) on " +
                  options.device +
                  ": place them across ranks (--nproc N --embedding-sharding table or row), cap them with --set "
                  "max_rows=N (e.g. 1000000), or use --scale small");
    }
    if (adagrad(name_)) {
      // MLPerf DLRMv2's reference: Adagrad on tables and MLPs alike, eps 1e-10,
      // no learning-rate decay, no weight decay, accumulators from 0.
      optimizer_ = make_adagrad(
          {torch::optim::OptimizerParamGroup(model_->parameters())},
          torch::optim::AdagradOptions(lr_).eps(1e-10).lr_decay(0).weight_decay(0).initial_accumulator_value(0),
          options.optimizer_impl);
    } else {
      optimizer_ = make_sgd(model_->parameters(), torch::optim::SGDOptions(lr_), options.optimizer_impl);
    }
    const Shard shard{options.rank, options.world_size};
    if (MultiHotCriteoBatches::is_dataset(options.data_path)) {
      // MLPerf DLRMv2's multi-hot days: ids inside the published tables,
      // taken modulo the run's (capped) ones; the bags as long as the files say.
      auto reader = std::make_shared<MultiHotCriteoBatches>(options.data_path, nn::dlrm_config(name_).table_sizes,
                                                            config_.table_sizes, options.batch_size, shard);
      data_lookups_ = reader->multi_hot_sizes();
      batches_ = BatchSource(reader, [device](const MultiHotBatch& b) { return to_training_batch(b, device); });
    } else if (!options.data_path.empty()) {
      // Rank r of W reads the file's data lines r, r+W, ... One id per table
      // and sample: a TSV is one-hot (MLPerf's multi-hot files are made from
      // it by its own generator).
      batches_ = read_dataset<CriteoBatches>(device, options.data_path, config_.table_sizes, options.batch_size, shard);
      data_lookups_.assign(config_.table_sizes.size(), 1);
    } else {
      batches_ = BatchSource(synthetic_batches(options.batch_size, options.data_seed()));
    }
  }

  void set_process_group(ProcessGroup* group) override { group_ = group; }

  std::vector<torch::Tensor> rank_local_parameters() const override {
    return sharded_ ? sharded_->parameters() : std::vector<torch::Tensor>{};
  }

  CollectiveLog* model_collectives() override { return sharded_ ? &sharded_->collectives() : nullptr; }

  LossAndOutputs compute_loss(const Batch& batch) override {
    auto logits = model_->forward(batch.inputs[0], at::TensorList(batch.inputs).slice(1));
    // The references apply a sigmoid then BCE; on the logit is the same loss, stabler.
    return {torch::nn::functional::binary_cross_entropy_with_logits(logits.to(torch::kFloat), batch.targets[0]),
            {logits}};
  }

  std::map<std::string, std::string> resolved_settings() const override {
    return {{"lr", fmt::format("{}", lr_)}};  // shortest exact text: 0.1, 0.005
  }

  nlohmann::json configuration() const override {
    static const char* interactions[] = {"dot", "cat", "dcn"};
    nlohmann::json c = {{"config", name_},
                        {"max_rows", max_rows_},
                        {"table_sizes", config_.table_sizes},
                        {"lookups_per_table", lookups()},
                        {"lookup_skew", skew_},
                        {"embedding_dim", config_.embedding_dim},
                        {"bottom_mlp", nn::dlrm_bottom_widths(config_)},
                        {"interaction", interactions[static_cast<int>(config_.interaction)]},
                        {"top_mlp", nn::dlrm_top_widths(config_)},
                        {"optimizer", adagrad(name_) ? "adagrad" : "sgd"},
                        {"embedding_parameters", nn::dlrm_embedding_parameters(config_)},
                        {"dense_parameters", nn::dlrm_dense_parameters(config_)}};
    if (config_.interaction == nn::DLRMInteraction::dcn)
      c["cross_network"] = {{"layers", config_.cross_layers}, {"rank", config_.cross_rank}};
    if (sharded_) {
      // This rank's part of each table: [first, end) rows, and their parameters.
      nlohmann::json held = nlohmann::json::array();
      int64_t parameters = 0;
      for (size_t t = 0; t < config_.table_sizes.size(); ++t) {
        const auto [first, end] = sharded_->rows_held(t);
        held.push_back({first, end});
        parameters += (end - first) * config_.embedding_dim;
      }
      c["embedding_sharding"] = {{"placement", to_string(embedding_sharding_)},
                                 {"rows_held", held},
                                 {"embedding_parameters_held", parameters}};
    }
    return c;
  }

 private:
  // Ids per sample and table: the data's where it is read, else the configuration's.
  std::vector<int64_t> lookups() const {
    if (!data_lookups_.empty()) return data_lookups_;
    if (config_.lookups.empty()) return std::vector<int64_t>(config_.table_sizes.size(), 1);
    return config_.lookups;
  }

  // Criteo-like batches: dense counts heavy-tailed then log(1 + x) as the
  // reader does; each table's ids from a power law over ranks (power_law_ids:
  // click logs' categorical values are skewed), as many per sample as the
  // configuration's multi-hot size; labels with Criteo Kaggle's 25.6% click rate.
  BatchPool synthetic_batches(int64_t batch_size, uint64_t seed) const {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(seed, 0xd1e));
    const auto per_table = lookups();
    return synthetic_pool([&] {
      auto counts = torch::floor(torch::exp(torch::randn({batch_size, config_.dense_features}, gen) * 1.5 + 1.0));
      std::vector<torch::Tensor> ids;
      for (size_t t = 0; t < config_.table_sizes.size(); ++t)
        ids.push_back(power_law_ids(config_.table_sizes[t], batch_size * per_table[t], skew_, gen)
                          .view({batch_size, per_table[t]}));
      Batch b;
      b.inputs = fixed_size_bags(ids, device_);
      b.inputs.insert(b.inputs.begin(), torch::log1p(counts).to(device_));
      b.targets = {torch::bernoulli(torch::full({batch_size}, 0.256), gen).to(device_)};
      b.samples = batch_size;
      return b;
    });
  }

  std::string name_;
  int64_t max_rows_ = 0;
  double skew_ = 1.0, lr_ = 0.1;
  std::vector<int64_t> data_lookups_;
  EmbeddingSharding embedding_sharding_ = EmbeddingSharding::replicate;
  ProcessGroup* group_ = nullptr;
  ShardedEmbeddingBags sharded_{nullptr};
  nn::DLRMConfig config_;
};

}  // namespace

std::unique_ptr<Workload> make_dlrm() { return std::make_unique<DLRM>(); }

}  // namespace tbd
