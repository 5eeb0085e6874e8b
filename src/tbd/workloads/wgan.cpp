// wgan: WGAN-GP (Gulrajani et al. 2017) with the 64×64 ResNet generator and
// critic of the authors' gan_64x64.py, Adam (1e-4, β 0 and 0.9) for both, a
// gradient penalty λ·(‖∇D(x̂)‖ − 1)² on random interpolates x̂ computed by
// double backward, and 5 critic updates per generator update.
//
// One tbd iteration is one generator iteration of the paper's Algorithm 1:
// critic_iters critic updates, each on its own batch of real images, then one
// generator update. The batch size is the per-update batch (64 in the paper);
// an iteration consumes critic_iters × batch real images, and those are its
// samples (docs/metrics.md). The loss returned is the critic's loss of the
// last critic update, E[D(fake)] − E[D(real)] + λ·GP: what the critic
// minimises, the negative Wasserstein estimate plus the penalty.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/nn/functional/upsampling.h>
#include <torch/optim/adam.h>

#include "tbd/core/error.h"
#include "tbd/data/batch_source.h"
#include "tbd/data/image_folder_batches.h"
#include "tbd/nn/wgan_resnet.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

// full: the published DIM 64; small: half the channels (about a quarter of
// the FLOPs); tiny: DIM 4. Images stay 64×64: the resolution is the architecture.
nn::WganConfig config_for(Scale scale) {
  nn::WganConfig c;  // full: DIM 64
  if (scale == Scale::small) c.dim = 32;
  if (scale == Scale::tiny) c.dim = 4;
  return c;
}

// Turns off gradients of a module's parameters for a scope: the generator's
// update needs gradients through the critic, not of the critic's weights.
class FrozenParameters {
 public:
  explicit FrozenParameters(const torch::nn::Module& module) : parameters_(module.parameters()) {
    for (auto& p : parameters_) p.requires_grad_(false);
  }
  ~FrozenParameters() {
    for (auto& p : parameters_) p.requires_grad_(true);
  }
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

 private:
  std::vector<torch::Tensor> parameters_;
};

class Wgan final : public Workload {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "wgan",
        .domain = "adversarial learning",
        .model = "WGAN-GP with the 64x64 ResNet generator and critic (Gulrajani et al. 2017, gan_64x64.py), Adam",
        .dataset = "64x64 images: synthetic, or an image folder (--data DIR/<class>/*.jpg, resized to 64x64)",
        .sample_unit = "images",
        .default_batch = 64,
        .settings = {real_setting("lr", 1e-4, 0.0, 1e12, "Adam learning rate of the critic and the generator"),
                     real_setting("beta1", 0.0, 0.0, 1.0, "Adam beta1 (both)"),
                     real_setting("beta2", 0.9, 0.0, 1.0, "Adam beta2 (both)"),
                     integer_setting("critic_iters", 5, 1, 100, "critic updates per generator update (per iteration)"),
                     real_setting("gp_lambda", 10.0, 0.0, 1e6, "gradient penalty weight lambda")},
        .grad_accum_refusal =
            "an iteration of WGAN-GP is critic_iters critic steps, each on its own real batch, then one generator "
            "step: two models whose optimizers alternate, not one step that micro-batches could add up to; give a "
            "larger --batch-size instead"};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    const nn::WganConfig config = config_for(Scale::full);
    return count_parameters(*nn::WganGenerator(config)) + count_parameters(*nn::WganCritic(config));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    batch_size_ = options.batch_size;
    critic_iters_ = settings.integer("critic_iters");
    gp_lambda_ = settings.real("gp_lambda");
    config_ = config_for(options.scale);
    const int64_t real_per_iteration = critic_iters_ * batch_size_;
    if (!options.data_path.empty()) {
      auto folder = std::make_shared<const ImageFolder>(options.data_path);
      // One shuffle shared by all ranks; each rank takes its own global batches.
      batches_ = BatchSource(
          std::make_shared<ImageFolderBatches>(folder, real_per_iteration, static_cast<int>(nn::kWganImageSize),
                                               options.seed, options.data_workers, options.rank, options.world_size,
                                               ImagePreparation::resize_to_tanh_range),
          [device](const ImageBatch& b) {  // labels unused: the GAN is unconditional
            Batch batch;
            batch.inputs = {to_device(b.images, device)};
            batch.samples = b.images.size(0);
            return batch;
          });
    } else {
      batches_ = BatchSource(synthetic_batches(real_per_iteration, options.data_seed()));
    }
    generator_ = nn::WganGenerator(config_);
    critic_ = nn::WganCritic(config_);
    generator_->to(device);
    critic_->to(device);
    generator_->train();
    critic_->train();
    const auto adam =
        torch::optim::AdamOptions(settings.real("lr")).betas({settings.real("beta1"), settings.real("beta2")});
    generator_optimizer_ = make_adam(generator_->parameters(), adam, options.optimizer_impl);
    critic_optimizer_ = make_adam(critic_->parameters(), adam, options.optimizer_impl);
  }

  Batch next_batch() override { return batches_.next(); }

  // One batch: grad_accum_refusal keeps --grad-accum at 1.
  StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) override {
    const Batch& batch = micro_batches.front();
    const auto real_batches = batch.inputs[0].split(batch_size_);
    torch::Tensor critic_loss;
    for (int64_t i = 0; i < critic_iters_; ++i) critic_loss = critic_update(real_batches[i], phases);
    generator_update(phases);
    return {critic_loss};
  }

  std::map<std::string, torch::Tensor> named_weights() const override {
    std::map<std::string, torch::Tensor> out;
    for (const auto& p : generator_->named_parameters()) out["generator." + p.key()] = p.value().detach();
    for (const auto& p : critic_->named_parameters()) out["critic." + p.key()] = p.value().detach();
    return out;
  }

  ParameterSet state() const override {
    ParameterSet s;
    s.add(*generator_);
    s.add(*critic_);
    if (generator_optimizer_) s.add(*generator_optimizer_);
    if (critic_optimizer_) s.add(*critic_optimizer_);
    return s;
  }
  std::vector<torch::optim::Optimizer*> optimizers() override {
    return {critic_optimizer_.get(), generator_optimizer_.get()};
  }

  nlohmann::json configuration() const override {
    return {{"dim", config_.dim},
            {"latent", config_.latent},
            {"image_size", nn::kWganImageSize},
            {"critic_iters", critic_iters_},
            {"gp_lambda", gp_lambda_},
            {"real_images_per_iteration", critic_iters_ * batch_size_},
            {"loss", "critic: E[D(fake)] - E[D(real)] + lambda * GP, of the last critic update"}};
  }

 private:
  torch::Tensor noise(int64_t n) const { return torch::randn({n, config_.latent}, torch::device(device_)); }

  // One critic update on `real`: fakes from the current generator (no
  // gradient into it), the Wasserstein term and the gradient penalty.
  torch::Tensor critic_update(const torch::Tensor& real, Phases& phases) {
    const int64_t n = real.size(0);
    auto forward = phases.forward();
    torch::Tensor fake;
    {
      torch::NoGradGuard no_grad;
      fake = generator_->forward(noise(n)).to(real.dtype());
    }
    auto loss = critic_->forward(fake).mean() - critic_->forward(real).mean();
    // Gradient penalty: the critic's input gradient at x̂ = real + α(fake − real),
    // kept in the graph (create_graph) so the loss's backward differentiates it.
    const auto alpha = torch::rand({n, 1, 1, 1}, real.options());
    const auto interpolates = (real + alpha * (fake - real)).requires_grad_(true);
    const auto scores = critic_->forward(interpolates);
    const auto gradients = torch::autograd::grad({scores.sum()}, {interpolates}, /*grad_outputs=*/{},
                                                 /*retain_graph=*/true, /*create_graph=*/true)[0];
    const auto slopes = gradients.flatten(1).norm(2, {1});  // per-sample ‖∇‖₂
    loss = loss + gp_lambda_ * (slopes - 1).pow(2).mean();
    forward.end();
    phases.backward(loss);
    phases.optimizer_step(*critic_optimizer_);
    return loss.detach();
  }

  // One generator update: maximise the critic's score of fresh fakes.
  void generator_update(Phases& phases) {
    FrozenParameters frozen(*critic_);
    auto forward = phases.forward();
    const auto loss = -critic_->forward(generator_->forward(noise(batch_size_))).mean();
    forward.end();
    phases.backward(loss);
    phases.optimizer_step(*generator_optimizer_);
  }

  BatchPool synthetic_batches(int64_t images, uint64_t seed) const {
    // Image-like pixels in [-1, 1]: smooth random fields (8×8 noise blown up
    // bilinearly) squashed by tanh, the generator's output range.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return synthetic_pool([&] {
      auto coarse = torch::randn({images, 3, 8, 8}, gen);
      namespace F = torch::nn::functional;
      auto fine = F::interpolate(coarse, F::InterpolateFuncOptions()
                                             .size(std::vector<int64_t>{nn::kWganImageSize, nn::kWganImageSize})
                                             .mode(torch::kBilinear)
                                             .align_corners(false));
      Batch b;
      b.inputs = {torch::tanh(fine).to(device_)};
      b.samples = images;
      return b;
    });
  }

  torch::Device device_{torch::kCPU};
  int64_t batch_size_ = 64, critic_iters_ = 5;
  double gp_lambda_ = 10;
  nn::WganConfig config_;
  nn::WganGenerator generator_{nullptr};
  nn::WganCritic critic_{nullptr};
  std::unique_ptr<torch::optim::Adam> generator_optimizer_, critic_optimizer_;
  BatchSource batches_;
};

}  // namespace

std::unique_ptr<Workload> make_wgan() { return std::make_unique<Wgan>(); }

}  // namespace tbd
