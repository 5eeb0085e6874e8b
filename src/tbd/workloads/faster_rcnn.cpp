// faster_rcnn: object detection with Faster R-CNN and a ResNet-FPN backbone
// (torchvision's recipe), Pascal VOC's 20 classes plus background, SGD.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/sgd.h>

#include <algorithm>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/data/detection_batch.h"
#include "tbd/data/synthetic_detection.h"
#include "tbd/data/voc_batches.h"
#include "tbd/nn/faster_rcnn.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

constexpr int64_t kVocClasses = 21;  // 20 object classes + background
constexpr int64_t kCalibrationImages = 8;

struct ScaleConfig {
  nn::FasterRcnnConfig model;
  DetectionSizes sizes;
  int64_t synthetic_long_side;  // of the raw synthetic pictures, before resizing
};

nn::FasterRcnnConfig published(const Settings& settings) {
  nn::FasterRcnnConfig c;
  c.depth = settings.text("backbone") == "resnet50" ? 50 : 101;
  c.classes = kVocClasses;
  return c;
}

ScaleConfig config_for(Scale scale, const Settings& settings) {
  ScaleConfig s{published(settings), {600, 1000}, 500};
  switch (scale) {
    case Scale::full: break;
    case Scale::small: s.sizes = {300, 500}; break;  // the published network, a quarter of the pixels
    case Scale::tiny:
      s.model.width = 8;
      s.model.blocks = {1, 1, 1, 1};
      s.model.fpn_channels = 32;
      s.model.heads.representation = 64;
      s.model.anchor_sizes = {{8}, {16}, {32}, {64}, {128}};  // a quarter, as the images are small
      s.model.rpn.pre_nms_top_n = 200;
      s.model.rpn.post_nms_top_n = 100;
      s.model.rpn.samples_per_image = 64;
      s.model.heads.samples_per_image = 64;
      s.sizes = {64, 128};
      s.synthetic_long_side = 128;
      break;
  }
  return s;
}

class FasterRcnnWorkload final : public Recipe<nn::FasterRcnn> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "faster_rcnn",
        .domain = "object detection",
        .model = "Faster R-CNN, ResNet-FPN backbone with frozen batch norm (Ren et al. 2015; torchvision recipe)",
        .dataset = "Pascal VOC: synthetic images with boxes, or a VOC folder (--data DIR)",
        .sample_unit = "images",
        .default_batch = 2,
        .settings = {choice_setting("backbone", "resnet101", {"resnet101", "resnet50"},
                                    "ResNet depth of the FPN backbone"),
                     real_setting("lr", 0.02, 0.0, 1e12,
                                  "learning rate at batch 16, scaled linearly with the batch size"),
                     real_setting("momentum", 0.9, 0.0, 1.0, "SGD momentum"),
                     real_setting("weight_decay", 1e-4, 0.0, 1.0, "L2 weight decay")},
        .cuda_graph_refusal =
            "keeps as many region proposals as non-maximum suppression leaves and samples boxes per image: "
            "shapes decided by the data during the step, which a graph cannot replay",
        .lr_reference_batch = 16};  // torchvision's detection recipe: 0.02 for 16 images
    return info;
  }

  std::string model_title(const Settings& settings) const override {
    return "Faster R-CNN, " + std::string(settings.text("backbone") == "resnet50" ? "ResNet-50" : "ResNet-101") +
           "-FPN backbone with frozen batch norm (Ren et al. 2015; torchvision recipe)";
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    return count_parameters(*nn::FasterRcnn(published(settings)));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    scale_ = config_for(options.scale, settings);
    backbone_ = settings.text("backbone");
    // Frozen batch-norm statistics come from images all ranks agree on (the
    // run seed's or the dataset's first, not the rank's data stream), so
    // replicas stay identical; at least kCalibrationImages, as two images
    // give noisy statistics.
    const int64_t calibration_images = std::max(options.batch_size, kCalibrationImages);
    Batch calibration;
    if (!options.data_path.empty()) {
      auto voc = std::make_shared<const PascalVoc>(options.data_path);  // checks every annotation now
      images_in_dataset_ = static_cast<int64_t>(voc->size());
      std::vector<LabelledImage> first;
      for (int64_t i = 0; i < calibration_images; ++i)
        first.push_back(to_labelled_image(voc->read(static_cast<size_t>(i % images_in_dataset_))));
      calibration = make_detection_batch(first, scale_.sizes, device);
      batches_ = read_dataset<VocBatches>(device, voc, options.batch_size, scale_.sizes, options.seed,
                                          options.data_workers, Shard{options.rank, options.world_size});
    } else {
      batches_ = BatchSource(synthetic_batches(options.batch_size, options.data_seed()));
      auto generator = at::make_generator<at::CPUGeneratorImpl>(derive_seed(options.seed, 0xca1b));
      calibration = synthetic_batch(calibration_images, generator);
    }

    place(nn::FasterRcnn(scale_.model), device);
    model_->calibrate(calibration.inputs[0]);

    lr_ = scaled_lr(info(), settings.real("lr"), options.step_batch());
    std::vector<torch::Tensor> trainable;
    for (auto& p : model_->parameters())
      if (p.requires_grad()) trainable.push_back(p);
    optimizer_ = make_sgd(
        trainable,
        torch::optim::SGDOptions(lr_).momentum(settings.real("momentum")).weight_decay(settings.real("weight_decay")),
        options.optimizer_impl);
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    const auto& images = batch.inputs[0];
    const auto sizes = batch.inputs[1].accessor<int64_t, 2>();
    std::vector<nn::ImageSize> image_sizes;
    std::vector<torch::Tensor> boxes, labels;
    for (int64_t i = 0; i < images.size(0); ++i) {
      image_sizes.emplace_back(sizes[i][0], sizes[i][1]);
      boxes.push_back(batch.targets[static_cast<size_t>(2 * i)]);
      labels.push_back(batch.targets[static_cast<size_t>(2 * i + 1)]);
    }
    const nn::FasterRcnnLosses losses = model_->forward(images, image_sizes, boxes, labels);
    return {losses.total(),
            {losses.rpn_objectness, losses.rpn_box_regression, losses.classifier, losses.box_regression}};
  }

  nlohmann::json configuration() const override {
    const auto& m = scale_.model;
    std::vector<double> anchors;
    for (const auto& level : m.anchor_sizes) anchors.insert(anchors.end(), level.begin(), level.end());
    return {{"backbone", backbone_},
            {"classes", m.classes},
            {"min_size", scale_.sizes.min_size},
            {"max_size", scale_.sizes.max_size},
            {"anchor_sizes", anchors},
            {"aspect_ratios", m.aspect_ratios},
            {"rpn_pre_nms_top_n", m.rpn.pre_nms_top_n},
            {"rpn_post_nms_top_n", m.rpn.post_nms_top_n},
            {"rpn_samples_per_image", m.rpn.samples_per_image},
            {"roi_samples_per_image", m.heads.samples_per_image},
            {"effective_lr", lr_},
            {"data", batches_.reads_dataset() ? "pascal_voc" : "synthetic"},
            {"images_in_dataset", images_in_dataset_}};
  }

 private:
  Batch synthetic_batch(int64_t batch_size, at::Generator& generator) const {
    std::vector<LabelledImage> images;
    for (int64_t i = 0; i < batch_size; ++i)
      images.push_back(synthetic_detection_image(generator, scale_.synthetic_long_side, scale_.model.classes));
    return make_detection_batch(images, scale_.sizes, device_);
  }

  BatchPool synthetic_batches(int64_t batch_size, uint64_t seed) const {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    return synthetic_pool([&] { return synthetic_batch(batch_size, generator); });
  }

  ScaleConfig scale_{};
  std::string backbone_;
  double lr_ = 0;
  int64_t images_in_dataset_ = 0;  // 0: synthetic
};

}  // namespace

std::unique_ptr<Workload> make_faster_rcnn() { return std::make_unique<FasterRcnnWorkload>(); }

}  // namespace tbd
