// ncf: NeuMF (He et al. 2017) on MovieLens-20M sizes as MLPerf's NCF
// reference: implicit feedback, 4 sampled negatives per positive, binary
// cross-entropy on the fused logit, Adam.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

#include <cmath>
#include <memory>

#include "tbd/core/rng.h"
#include "tbd/data/movielens.h"
#include "tbd/nn/neumf.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::NeuMFConfig config_for(Scale scale) {
  nn::NeuMFConfig c;  // full: MovieLens-20M, 64 factors, MLP 256-256-128-64
  if (scale == Scale::small) {
    c.users = 6'040;  // MovieLens-1M (He et al.'s own data set), the same network
    c.items = 3'706;
  } else if (scale == Scale::tiny) {
    c.users = 300;
    c.items = 200;
    c.mf_dim = 8;
    c.mlp_widths = {32, 32, 16, 8};
  }
  return c;
}

class NCF final : public Recipe<nn::NeuMF> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "ncf",
        .domain = "recommendation",
        .model = "NeuMF: GMF + MLP 256-256-128-64 (He et al. 2017), BCE, Adam",
        .dataset = "MovieLens-20M implicit feedback: synthetic, or a ratings CSV (--data ratings.csv)",
        .sample_unit = "samples",
        .default_batch = 2048,
        .settings = {real_setting("lr", 1e-3, 0.0, 1e6, "Adam learning rate"),
                     integer_setting("negatives", 4, 0, 1000, "sampled negatives per positive interaction")}};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    return nn::neumf_parameters(config_for(Scale::full));  // closed form: no 32M-row allocation
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    negatives_ = settings.integer("negatives");
    config_ = config_for(options.scale);
    if (!options.data_path.empty()) {
      auto ratings = std::make_shared<const MovieLensRatings>(options.data_path);
      config_.users = ratings->users();  // the embeddings are sized to the file's users and items
      config_.items = ratings->items();
      // One order shared by all ranks (options.seed); each rank reads its own batches of it.
      batches_ = read_dataset<InteractionBatches>(device, ratings, options.batch_size, negatives_, options.seed,
                                                  options.data_workers, Shard{options.rank, options.world_size});
    } else {
      batches_ = BatchSource(synthetic_batches(options.batch_size, options.data_seed()));
    }
    place(nn::NeuMF(config_), device);
    optimizer_ =
        make_adam(model_->parameters(), torch::optim::AdamOptions(settings.real("lr")), options.optimizer_impl);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    auto logits = model_->forward(batch.inputs[0], batch.inputs[1]);
    return {torch::nn::functional::binary_cross_entropy_with_logits(logits.to(torch::kFloat), batch.targets[0]),
            {logits}};
  }

  nlohmann::json configuration() const override {
    return {{"users", config_.users},   {"items", config_.items},
            {"mf_dim", config_.mf_dim}, {"mlp_widths", config_.mlp_widths},
            {"negatives", negatives_},  {"positive_share", 1.0 / static_cast<double>(1 + negatives_)}};
  }

 private:
  // Users uniform; positive items from a power law over popularity ranks
  // (MovieLens ratings concentrate on few films), negatives uniform; the
  // same positive/negative layout as the real pipeline.
  BatchPool synthetic_batches(int64_t batch_size, uint64_t seed) const {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(seed, 0x9cf));
    const auto slot = torch::arange(batch_size, torch::kInt64).remainder(1 + negatives_);
    const auto positive = slot.eq(0);
    return synthetic_pool([&] {
      const int64_t groups = (batch_size + negatives_) / (1 + negatives_);
      auto users = torch::randint(config_.users, {groups}, gen, torch::kInt64)
                       .repeat_interleave(1 + negatives_)
                       .narrow(0, 0, batch_size);
      auto rank =
          torch::floor(torch::exp(torch::rand({batch_size}, gen) * std::log(static_cast<double>(config_.items))))
              .to(torch::kInt64) -
          1;
      auto popular = (rank.clamp(0, config_.items - 1) * 2654435761LL).remainder(config_.items);
      auto uniform = torch::randint(config_.items, {batch_size}, gen, torch::kInt64);
      Batch b;
      b.inputs = {users.to(device_), torch::where(positive, popular, uniform).to(device_)};
      b.targets = {positive.to(torch::kFloat).to(device_)};
      b.samples = batch_size;
      return b;
    });
  }

  nn::NeuMFConfig config_;
  int64_t negatives_ = 4;
};

}  // namespace

std::unique_ptr<Workload> make_ncf() { return std::make_unique<NCF>(); }

}  // namespace tbd
