// dlrm: DLRM (Naumov et al. 2019) in the Criteo Kaggle configuration of
// facebookresearch/dlrm: 26 embedding bags of dimension 16, bottom MLP
// 13-512-256-64-16, dot interaction, top MLP 367-512-256-1, binary
// cross-entropy, plain SGD on sparse embedding gradients.
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <new>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/data/criteo.h"
#include "tbd/nn/dlrm.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::DLRMConfig config_for(Scale scale, int64_t max_rows) {
  nn::DLRMConfig c;  // full: the Kaggle tables, 540,677,217 parameters
  int64_t cap = max_rows;
  if (scale == Scale::small) {
    cap = cap > 0 ? std::min<int64_t>(cap, 100'000) : 100'000;  // the same network, tables ≤ 100k rows
  } else if (scale == Scale::tiny) {
    cap = cap > 0 ? std::min<int64_t>(cap, 1'000) : 1'000;
    c.embedding_dim = 8;
    c.bottom = {32};
    c.top = {32};
  }
  if (cap > 0)
    for (auto& rows : c.table_sizes) rows = std::min(rows, cap);
  return c;
}

class DLRM final : public Recipe<nn::DLRM> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "dlrm",
        .domain = "recommendation",
        .model =
            "DLRM, Criteo Kaggle config: 26 tables x 16, MLPs 13-512-256-64-16 / 512-256-1, dot "
            "interaction, SGD (Naumov et al. 2019)",
        .dataset = "Criteo Kaggle click logs: synthetic with skewed ids, or a Criteo TSV (--data train.txt)",
        .sample_unit = "samples",
        .default_batch = 128,
        .settings = {real_setting("lr", 0.1, 0.0, 1e6, "SGD learning rate"),
                     integer_setting("max_rows", 0, 0, int64_t{1} << 40,
                                     "cap every embedding table at this many rows (0: the Kaggle sizes); ids "
                                     "are taken modulo the table size")},
        .sharding_refusal =
            "its embedding tables get sparse gradients (the rows a batch looked up), which ZeRO's flat slices do "
            "not cut; run it with --sharding none (its tables are all-reduced sparse)"};
    return info;
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    // Closed form: the full tables hold 540M parameters (2.2 GB), too many to
    // allocate for a listing.
    return nn::dlrm_parameters(config_for(Scale::full, settings.integer("max_rows")));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    max_rows_ = settings.integer("max_rows");
    config_ = config_for(options.scale, max_rows_);
    try {
      place(nn::DLRM(config_), device);
    } catch (const std::exception& e) {
      const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
                       dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                       std::string(e.what()).find("can't allocate memory") != std::string::npos;
      if (!oom) throw;
      throw Error("out of memory allocating DLRM's embedding tables (" +
                  std::to_string(nn::dlrm_parameters(config_) * 4 / (1 << 20)) +
                  " MiB of fp32 "
                  "weights) on " +
                  options.device +
                  ": cap the tables with --set max_rows=N "
                  "(e.g. 1000000), or use --scale small");
    }
    optimizer_ = make_sgd(model_->parameters(), torch::optim::SGDOptions(settings.real("lr")), options.optimizer_impl);
    if (!options.data_path.empty()) {
      // Rank r of W reads the file's data lines r, r+W, ...
      batches_ = read_dataset<CriteoBatches>(device, options.data_path, config_.table_sizes, options.batch_size,
                                             Shard{options.rank, options.world_size});
    } else {
      batches_ = BatchSource(synthetic_batches(options.batch_size, options.data_seed()));
    }
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    auto logits = model_->forward(batch.inputs[0], batch.inputs[1]);
    // The reference applies a sigmoid then BCE; on the logit is the same loss, stabler.
    return {torch::nn::functional::binary_cross_entropy_with_logits(logits.to(torch::kFloat), batch.targets[0]),
            {logits}};
  }

  nlohmann::json configuration() const override {
    return {{"max_rows", max_rows_},
            {"table_sizes", config_.table_sizes},
            {"embedding_dim", config_.embedding_dim},
            {"bottom_mlp", nn::dlrm_bottom_widths(config_)},
            {"top_mlp", nn::dlrm_top_widths(config_)}};
  }

 private:
  // Criteo-like batches: dense counts heavy-tailed then log(1 + x) as the
  // reader does; ids from a power law over ranks (P(rank r) ∝ 1/r, as click
  // logs' categorical values), the hot ranks scattered over the table by a
  // multiplicative hash; labels with Criteo Kaggle's 25.6% click rate.
  BatchPool synthetic_batches(int64_t batch_size, uint64_t seed) const {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(seed, 0xd1e));
    return synthetic_pool([&] {
      auto counts = torch::floor(torch::exp(torch::randn({batch_size, kCriteoDense}, gen) * 1.5 + 1.0));
      std::vector<torch::Tensor> ids;
      for (int64_t rows : config_.table_sizes) {
        auto rank = torch::floor(torch::exp(torch::rand({batch_size}, gen) * std::log(static_cast<double>(rows))))
                        .to(torch::kInt64) -
                    1;
        ids.push_back((rank.clamp(0, rows - 1) * 2654435761LL).remainder(rows));
      }
      Batch b;
      b.inputs = {torch::log1p(counts).to(device_), torch::stack(ids, 1).to(device_)};
      b.targets = {torch::bernoulli(torch::full({batch_size}, 0.256), gen).to(device_)};
      b.samples = batch_size;
      return b;
    });
  }

  int64_t max_rows_ = 0;
  nn::DLRMConfig config_;
};

}  // namespace

std::unique_ptr<Workload> make_dlrm() { return std::make_unique<DLRM>(); }

}  // namespace tbd
