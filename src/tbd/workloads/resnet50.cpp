// resnet50: ImageNet classification with ResNet-50 v1.5 (or another depth of
// the family), cross-entropy, SGD with momentum and weight decay.
#include <fmt/format.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <sstream>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/core/rng.h"
#include "tbd/data/image_folder_batches.h"
#include "tbd/data/synthetic_images.h"
#include "tbd/nn/memory_format.h"
#include "tbd/nn/resnet.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

struct ScaleConfig {
  int64_t width;
  std::array<int, 4> blocks;  // zeros: published counts
  int64_t classes;
  int image_size;
};

ScaleConfig config_for(Scale scale) {
  switch (scale) {
    case Scale::full: return {64, {}, 1000, 224};
    case Scale::small: return {64, {}, 1000, 112};  // the published network, a quarter of the pixels
    case Scale::tiny: return {8, {1, 1, 1, 1}, 10, 32};
  }
  return {64, {}, 1000, 224};
}

// --set widths=NAME:COUNT,...: "published" (the default) is none.
std::map<std::string, int64_t> widths_from(const std::string& text) {
  std::map<std::string, int64_t> widths;
  if (text == "published") return widths;
  const std::string fix = "give widths=NAME:COUNT,... such as widths=layer3.0.conv2:232,layer1.0.conv1:56";
  // getline drops a trailing empty item ("a:8,"), so that one is looked for here.
  if (text.back() == ',') throw UsageError("--set widths '" + text + "' ends with an empty item; " + fix);
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto colon = item.rfind(':');
    const auto count = colon == std::string::npos ? std::nullopt : integer_from_text(item.substr(colon + 1));
    if (!count || *count < 1 || *count > 65536)
      throw UsageError("--set widths: '" + item + "' is not NAME:COUNT with a count of 1 to 65536; " + fix);
    if (!widths.emplace(item.substr(0, colon), *count).second)
      throw UsageError("--set widths names " + item.substr(0, colon) + " twice; " + fix);
  }
  return widths;
}

class ResNet50 final : public Recipe<nn::ResNet> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "resnet50",
        .domain = "image classification",
        .model = "ResNet-50 v1.5 (He et al. 2016; stride in the 3x3 conv), SGD momentum",
        .dataset = "ImageNet-1k: synthetic, or an image folder (--data DIR/<class>/*.jpg)",
        .sample_unit = "images",
        .default_batch = 32,
        .settings = {choice_setting("depth", "50", {"18", "34", "50", "101", "152"}, "ResNet depth"),
                     real_setting("lr", 0.1, 0.0, 1e12,
                                  "learning rate at batch 256, scaled linearly with the batch size"),
                     real_setting("momentum", 0.9, 0.0, 1.0, "SGD momentum"),
                     real_setting("weight_decay", 1e-4, 0.0, 1.0, "L2 weight decay"),
                     text_setting("widths", "published", "layer3.0.conv2:232,layer1.0.conv1:56",
                                  "pruned output channels of blocks' conv1/conv2 (tbd shapes' check; "
                                  "docs/analysis.md#tbd-shapes)")},
        .lr_reference_batch = 256};  // Goyal et al. 2017: 0.1 per 256 images
    return info;
  }

  std::string model_title(const Settings& settings) const override {
    return fmt::format("ResNet-{} v1.5 (He et al. 2016; stride in the 3x3 conv), SGD momentum",
                       settings.integer("depth"));
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    nn::ResNetConfig config;
    config.depth = static_cast<int>(settings.integer("depth"));
    return count_parameters(*nn::ResNet(config));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    const ScaleConfig scale = config_for(options.scale);
    image_size_ = scale.image_size;
    nn::ResNetConfig config;
    config.depth = static_cast<int>(settings.integer("depth"));
    config.width = scale.width;
    config.blocks = scale.blocks;
    config.classes = scale.classes;
    config.widths = widths_from(settings.text("widths"));
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
    classes_ = config.classes;
    try {
      place(nn::ResNet(config), device);
    } catch (const std::invalid_argument& e) {  // a --set widths name the model cannot prune
      throw UsageError(std::string("--set widths: ") + e.what());
    }
    memory_format_ = nn::resolve_memory_format(options.memory_format, device);
    nn::convert_memory_format(*model_, memory_format_);
    lr_ = scaled_lr(info(), settings.real("lr"), options.step_batch());
    optimizer_ = make_sgd(
        model_->parameters(),
        torch::optim::SGDOptions(lr_).momentum(settings.real("momentum")).weight_decay(settings.real("weight_decay")),
        options.optimizer_impl);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    auto logits = model_->forward(nn::in_memory_format(batch.inputs[0], memory_format_));
    return {torch::nn::functional::cross_entropy(logits, batch.targets[0]), {logits}};
  }

  nlohmann::json configuration() const override {
    return {{"image_size", image_size_},
            {"classes", classes_},
            {"effective_lr", lr_},
            {"memory_format", nn::memory_format_name(memory_format_)}};
  }

 private:
  int image_size_ = 224;
  at::MemoryFormat memory_format_ = at::MemoryFormat::Contiguous;
  int64_t classes_ = 1000;
  double lr_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_resnet50() { return std::make_unique<ResNet50>(); }

}  // namespace tbd
