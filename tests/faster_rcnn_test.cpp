#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/data/jpeg.h"
#include "tbd/data/voc_batches.h"
#include "tbd/nn/faster_rcnn.h"
#include "tbd/nn/frozen_batch_norm.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// torchvision FasterRCNN(resnet_fpn_backbone(resnetXX, FrozenBatchNorm2d), num_classes=21):
// sum(p.numel() for p in model.parameters()), frozen layers included.
TEST(FasterRcnn, FullScaleParameterCountsMatchTorchvision) {
  nn::FasterRcnnConfig config;
  config.depth = 50;
  nn::FasterRcnn r50(config);
  EXPECT_EQ(count_parameters(*r50), 41'396'536);
  // conv1 (9,408) and layer1 (212,992) stay frozen, as trainable_backbone_layers = 3.
  int64_t trainable = 0;
  for (const auto& p : r50->parameters())
    if (p.requires_grad()) trainable += p.numel();
  EXPECT_EQ(trainable, 41'396'536 - 9'408 - 212'992);
  config.depth = 101;
  EXPECT_EQ(count_parameters(*nn::FasterRcnn(config)), 60'336'440);
}

TEST(FasterRcnn, RegistryReportsBothBackbones) {
  const auto w = create_workload("faster_rcnn");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "faster_rcnn")), 60'336'440);
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {{"backbone", "resnet50"}}, "faster_rcnn")),
            41'396'536);
  EXPECT_THROW(Settings(w->info().settings, {{"backbone", "vgg"}}, "faster_rcnn"), UsageError);
}

TEST(FasterRcnn, TinyStepGivesFiniteLossAndTrainsEveryUnfrozenTensor) {
  // Without weight decay a tensor moves only if it got a gradient.
  WorkloadUnderTest t("faster_rcnn", Scale::tiny, {{"weight_decay", "0"}});
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 2);
  EXPECT_EQ(b.inputs[0].size(0), 2);
  EXPECT_EQ(b.inputs[0].size(2) % 32, 0);
  EXPECT_EQ(b.inputs[0].size(3) % 32, 0);
  ASSERT_EQ(b.targets.size(), 4u);  // boxes and labels of each image
  EXPECT_EQ(b.targets[0].size(1), 4);
  EXPECT_TRUE((b.targets[1] >= 1).all().item<bool>() && (b.targets[1] <= 20).all().item<bool>());

  std::vector<torch::Tensor> before;
  for (const auto& w : t.workload->state().weights) before.push_back(w.detach().clone());
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 0);

  // Gradients reach every trainable tensor (the backbone's through the FPN,
  // RoIAlign and the RPN); the frozen stem and layer1 stay as they were.
  const ParameterSet s = t.workload->state();
  ASSERT_EQ(s.weights.size(), before.size());
  int64_t frozen = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    const bool moved = !torch::equal(before[i], s.weights[i]);
    if (s.weights[i].requires_grad()) {
      EXPECT_TRUE(moved) << "trainable tensor " << i << " got no gradient";
    } else {
      ++frozen;
      EXPECT_FALSE(moved) << "frozen tensor " << i << " changed";
    }
  }
  EXPECT_GT(frozen, 0);
  EXPECT_LT(s.trainable_parameter_count(), s.parameter_count());
}

TEST(FasterRcnn, FrozenBatchNormIsCalibratedAndHasNoParameters) {
  WorkloadUnderTest t("faster_rcnn", Scale::tiny);
  const ParameterSet s = t.workload->state();
  // Calibration replaced the initial statistics (zeros and ones) by measured ones.
  bool calibrated = false;
  for (const auto& b : s.buffers) calibrated |= ((b != 0) & (b != 1)).any().item<bool>();
  EXPECT_TRUE(calibrated);
  nn::FrozenBatchNorm2d norm(4);
  EXPECT_EQ(count_parameters(*norm), 0);
  norm->calibrating = true;
  const auto x = torch::randn({8, 4, 5, 5}) * 3 + 2;
  const auto y = norm(x);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 1e-4);
  EXPECT_NEAR(y.var(/*unbiased=*/false).item<double>(), 1.0, 1e-3);
  norm->calibrating = false;
  EXPECT_TRUE(torch::allclose(norm(x), y));  // the statistics stay
}

TEST(FasterRcnn, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("faster_rcnn", Scale::tiny, {{"lr", "0.16"}});
  const auto losses = t.train_on_one_batch(30);
  for (double l : losses) ASSERT_TRUE(std::isfinite(l));
  EXPECT_LT(losses.back(), 0.6 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(FasterRcnn, Bf16AutocastStepRuns) {
  WorkloadUnderTest t("faster_rcnn", Scale::tiny, {}, 2, c10::ScalarType::BFloat16);
  const auto losses = t.train_on_one_batch(2);
  EXPECT_TRUE(std::isfinite(losses[0]));
  EXPECT_TRUE(std::isfinite(losses[1]));
}

TEST(FasterRcnn, SyntheticPoolHoldsDistinctBatches) {
  WorkloadUnderTest a("faster_rcnn", Scale::tiny);
  const Batch first = a.workload->next_batch(), second = a.workload->next_batch();
  EXPECT_FALSE(first.inputs[0].sizes() == second.inputs[0].sizes() && torch::equal(first.inputs[0], second.inputs[0]));
}

// A tiny VOC folder of 96x72 pictures, each a bright box on a dark ground,
// the k-th box 52 − 4k pixels tall.
void write_tiny_voc(const testing::TempDir& dir, int images = 3) {
  std::vector<std::string> ids;
  for (int k = 0; k < images; ++k) ids.push_back("00000" + std::to_string(5 + 2 * k));
  std::string split;
  for (size_t k = 0; k < ids.size(); ++k) {
    RgbImage img;
    img.width = 96;
    img.height = 72;
    img.pixels.assign(96 * 72 * 3, 30);
    const int x1 = 10 + 10 * static_cast<int>(k), y1 = 8, x2 = x1 + 40, y2 = 60 - 4 * static_cast<int>(k);
    for (int y = y1; y < y2; ++y)
      for (int x = x1; x < x2; ++x) img.pixels[static_cast<size_t>((y * 96 + x) * 3)] = 220;
    testing::write_bytes(dir / ("JPEGImages/" + ids[k] + ".jpg"), encode_jpeg(img));
    std::filesystem::create_directories(dir.path() / "Annotations");
    std::ofstream(dir / ("Annotations/" + ids[k] + ".xml"))
        << "<annotation><size><width>96</width><height>72</height><depth>3</depth></size><object><name>"
        << (k == 1 ? "cat" : "dog") << "</name><difficult>0</difficult><bndbox><xmin>" << x1 + 1 << "</xmin><ymin>"
        << y1 + 1 << "</ymin><xmax>" << x2 << "</xmax><ymax>" << y2 << "</ymax></bndbox></object></annotation>";
    split += ids[k] + "\n";
  }
  std::filesystem::create_directories(dir.path() / "ImageSets/Main");
  std::ofstream(dir / "ImageSets/Main/trainval.txt") << split;
}

TEST(FasterRcnnOnVoc, TrainsOnARealFolder) {
  testing::TempDir dir;
  write_tiny_voc(dir);
  WorkloadUnderTest t("faster_rcnn", Scale::tiny, {}, 2, c10::ScalarType::Float, dir.path().string());
  EXPECT_EQ(t.workload->configuration()["data"], "pascal_voc");
  EXPECT_EQ(t.workload->configuration()["images_in_dataset"], 3);
  for (int i = 0; i < 3; ++i) {
    const Batch b = t.workload->next_batch();
    EXPECT_EQ(b.samples, 2);
    // 96x72 pictures: shorter side 64 → 85x64, padded to 96x64.
    EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{2, 3, 64, 96}));
    for (int k = 0; k < 2; ++k) {
      const auto& boxes = b.targets[static_cast<size_t>(2 * k)];
      ASSERT_EQ(boxes.size(0), 1);
      EXPECT_NEAR((boxes[0][2] - boxes[0][0]).item<double>(), 40 * 85.0 / 96, 1e-3);  // width survives flips
      const int64_t label = b.targets[static_cast<size_t>(2 * k + 1)][0].item<int64_t>();
      EXPECT_TRUE(label == 8 || label == 12) << label;  // cat, dog
    }
    EXPECT_TRUE(std::isfinite(t.step(b)));
  }
}

TEST(FasterRcnnOnVoc, RanksReadDisjointShardsOfAnEpoch) {
  testing::TempDir dir;
  write_tiny_voc(dir, 4);
  const auto voc = std::make_shared<const PascalVoc>(dir.path().string());
  std::vector<double> heights;  // box heights identify the images
  for (int rank = 0; rank < 2; ++rank) {
    VocBatches batches(voc, 1, {64, 128}, 42, 1, Shard{rank, 2});
    for (int i = 0; i < 2; ++i) {
      const auto boxes = batches.next().targets[0];
      heights.push_back(std::round((boxes[0][3] - boxes[0][1]).item<double>() * 1000));
    }
  }
  std::sort(heights.begin(), heights.end());
  EXPECT_EQ(std::unique(heights.begin(), heights.end()), heights.end()) << "an image was read twice in one epoch";
}

TEST(FasterRcnnOnVoc, AMalformedAnnotationIsNamed) {
  testing::TempDir dir;
  write_tiny_voc(dir);
  std::ofstream(dir / "Annotations/000007.xml") << "<annotation><size><width>96</wid";
  const std::string message = testing::error_of<Error>(
      [&] { WorkloadUnderTest t("faster_rcnn", Scale::tiny, {}, 2, c10::ScalarType::Float, dir.path().string()); });
  EXPECT_NE(message.find("000007.xml"), std::string::npos) << message;
}

TEST(FasterRcnnOnVoc, HorizontalFlipMirrorsBoxes) {
  LabelledImage s{torch::arange(12, torch::kFloat).view({1, 3, 4}).expand({3, 3, 4}).contiguous(),
                  torch::tensor({{0.f, 1.f, 1.f, 3.f}}), torch::tensor({5}, torch::kInt64)};
  const LabelledImage f = flip_horizontally(s);
  EXPECT_TRUE(torch::equal(f.boxes, torch::tensor({{3.f, 1.f, 4.f, 3.f}})));
  EXPECT_EQ(f.image[0][0][0].item<float>(), 3.0f);  // the rightmost column comes first
  EXPECT_TRUE(torch::equal(flip_horizontally(f).image, s.image));
}

}  // namespace
}  // namespace tbd
