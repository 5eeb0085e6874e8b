// inception3: ImageNet classification with Inception-v3 (Szegedy et al. 2016)
// and its auxiliary classifier, label-smoothed cross-entropy, RMSprop with
// decay 0.9 and ε 1.0 and gradient clipping at 2.0, as the paper trains it.
#include <torch/nn/functional/loss.h>
#include <torch/optim/rmsprop.h>

#include "tbd/core/error.h"
#include "tbd/data/image_folder_batches.h"
#include "tbd/data/synthetic_images.h"
#include "tbd/nn/inception3.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

constexpr double kAuxLossWeight = 0.4;  // torchvision's reference recipe and the paper's auxiliary head

struct ScaleConfig {
  int64_t width_divisor;
  int64_t classes;
};

// Every scale keeps the published topology and the 299-pixel input: the
// auxiliary head's 5×5 valid conv on the 17×17 grid fixes the input at 299
// (only without the head may images shrink, down to 75, which tiny does).
// small narrows every layer by 2 (about a quarter of the FLOPs), tiny by 16.
ScaleConfig config_for(Scale scale) {
  switch (scale) {
    case Scale::full: return {1, 1000};
    case Scale::small: return {2, 1000};
    case Scale::tiny: return {16, 10};
  }
  return {1, 1000};
}

int image_size_for(Scale scale, bool aux) { return scale == Scale::tiny ? nn::inception3_min_image_size(aux) : 299; }

class Inception3 final : public Recipe<nn::Inception3> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "inception3",
        .domain = "image classification",
        .model = "Inception-v3 with auxiliary classifier (Szegedy et al. 2016; torchvision inception_v3), RMSprop",
        .dataset = "ImageNet-1k at 299x299: synthetic, or an image folder (--data DIR/<class>/*.jpg)",
        .sample_unit = "images",
        .default_batch = 32,
        .settings = {bool_setting("aux", true, "train the auxiliary classifier (loss weight 0.4)"),
                     real_setting("lr", 0.045, 0.0, 1e12,
                                  "RMSprop learning rate at batch 32, scaled linearly with the batch size"),
                     real_setting("decay", 0.9, 0.0, 1.0, "RMSprop decay of the squared-gradient average"),
                     real_setting("epsilon", 1.0, 0.0, 1e12, "RMSprop epsilon"),
                     real_setting("momentum", 0.9, 0.0, 1.0, "RMSprop momentum (Google's Inception training code)"),
                     real_setting("weight_decay", 4e-5, 0.0, 1.0, "L2 weight decay (TF-slim's Inception-v3)"),
                     real_setting("max_gradient_norm", 2.0, 0.0, 1e12,
                                  "clip gradients to this global norm (0: no clipping)"),
                     real_setting("label_smoothing", 0.1, 0.0, 1.0, "label smoothing of the cross-entropy")},
        .lr_reference_batch = 32};  // the paper's per-replica batch for lr 0.045
    return info;
  }

  std::string model_title(const Settings& settings) const override {
    return settings.boolean("aux") ? info().model
                                   : "Inception-v3 without its auxiliary classifier (Szegedy et al. 2016; "
                                     "torchvision inception_v3, aux_logits=False), RMSprop";
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    nn::Inception3Config config;
    config.aux = settings.boolean("aux");
    return count_parameters(*nn::Inception3(config));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    const ScaleConfig scale = config_for(options.scale);
    nn::Inception3Config config;
    config.aux = settings.boolean("aux");
    config.width_divisor = scale.width_divisor;
    config.classes = scale.classes;
    image_size_ = image_size_for(options.scale, config.aux);
    if (!options.data_path.empty()) {
      auto folder = std::make_shared<const ImageFolder>(options.data_path);
      config.classes = folder->classes();
      // One shuffle shared by all ranks; each rank takes its own global batches.
      batches_ = read_dataset<ImageFolderBatches>(device, folder, options.batch_size, image_size_, options.seed,
                                                  options.data_workers, options.rank, options.world_size);
    } else {
      batches_ = BatchSource(
          synthetic_image_batches(options.batch_size, config.classes, image_size_, options.data_seed(), device));
    }
    config_ = config;
    place(nn::Inception3(config), device);
    max_gradient_norm_ = settings.real("max_gradient_norm");
    label_smoothing_ = settings.real("label_smoothing");
    lr_ = scaled_lr(info(), settings.real("lr"), options.step_batch());
    // LibTorch's RMSprop adds ε outside the square root (TensorFlow's inside);
    // with ε = 1 both damp steps of small gradients alike.
    optimizer_ = make_rmsprop(model_->parameters(),
                              torch::optim::RMSpropOptions(lr_)
                                  .alpha(settings.real("decay"))
                                  .eps(settings.real("epsilon"))
                                  .momentum(settings.real("momentum"))
                                  .weight_decay(settings.real("weight_decay")),
                              options.optimizer_impl);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    namespace F = torch::nn::functional;
    const auto loss_options = F::CrossEntropyFuncOptions().label_smoothing(label_smoothing_);
    const nn::InceptionOutput out = model_->forward(batch.inputs[0]);
    // The objective: main loss + 0.4 × auxiliary loss (both label-smoothed).
    auto loss = F::cross_entropy(out.logits, batch.targets[0], loss_options);
    if (out.aux_logits.defined())
      loss = loss + kAuxLossWeight * F::cross_entropy(out.aux_logits, batch.targets[0], loss_options);
    return {loss, {out.logits, out.aux_logits}};
  }

  nlohmann::json configuration() const override {
    return {{"image_size", image_size_},
            {"classes", config_.classes},
            {"aux", config_.aux},
            {"width_divisor", config_.width_divisor},
            {"effective_lr", lr_}};
  }

 private:
  int image_size_ = 299;
  nn::Inception3Config config_;
  double lr_ = 0, label_smoothing_ = 0.1;
};

}  // namespace

std::unique_ptr<Workload> make_inception3() { return std::make_unique<Inception3>(); }

}  // namespace tbd
