#include "tbd/data/detection_batch.h"

#include <torch/nn/functional/upsampling.h>

#include <algorithm>

#include "tbd/data/batch_pool.h"

namespace tbd {
namespace F = torch::nn::functional;

namespace {
constexpr int64_t kSizeDivisible = 32;
}

LabelledImage resize_for_detection(const LabelledImage& sample, const DetectionSizes& sizes) {
  const int64_t h = sample.image.size(1), w = sample.image.size(2);
  const double scale = std::min(static_cast<double>(sizes.min_size) / static_cast<double>(std::min(h, w)),
                                static_cast<double>(sizes.max_size) / static_cast<double>(std::max(h, w)));
  auto resized = F::interpolate(sample.image.unsqueeze(0), F::InterpolateFuncOptions()
                                                               .scale_factor(std::vector<double>{scale, scale})
                                                               .mode(torch::kBilinear)
                                                               .align_corners(false)
                                                               .recompute_scale_factor(true))
                     .squeeze(0);
  const double ry = static_cast<double>(resized.size(1)) / static_cast<double>(h);
  const double rx = static_cast<double>(resized.size(2)) / static_cast<double>(w);
  const auto ratios = torch::tensor({rx, ry, rx, ry}, sample.boxes.options());
  return {resized, sample.boxes * ratios, sample.labels};
}

Batch make_detection_batch(const std::vector<LabelledImage>& samples, const DetectionSizes& sizes, c10::Device device) {
  static const auto mean = torch::tensor({0.485, 0.456, 0.406}, torch::kFloat).view({3, 1, 1});
  static const auto stddev = torch::tensor({0.229, 0.224, 0.225}, torch::kFloat).view({3, 1, 1});
  std::vector<LabelledImage> resized;
  int64_t max_h = 0, max_w = 0;
  for (const auto& s : samples) {
    resized.push_back(resize_for_detection(s, sizes));
    max_h = std::max(max_h, resized.back().image.size(1));
    max_w = std::max(max_w, resized.back().image.size(2));
  }
  const auto round_up = [](int64_t v) { return (v + kSizeDivisible - 1) / kSizeDivisible * kSizeDivisible; };
  const auto n = static_cast<int64_t>(samples.size());
  auto images = torch::zeros({n, 3, round_up(max_h), round_up(max_w)});
  auto image_sizes = torch::empty({n, 2}, torch::kInt64);
  Batch batch;
  for (int64_t i = 0; i < n; ++i) {
    const auto& r = resized[static_cast<size_t>(i)];
    const int64_t h = r.image.size(1), w = r.image.size(2);
    images[i].narrow(1, 0, h).narrow(2, 0, w).copy_((r.image - mean) / stddev);
    image_sizes[i][0] = h;
    image_sizes[i][1] = w;
    batch.targets.push_back(to_device(r.boxes.to(torch::kFloat), device));
    batch.targets.push_back(to_device(r.labels.to(torch::kInt64), device));
  }
  batch.inputs = {to_device(images, device), image_sizes};
  batch.samples = n;
  return batch;
}

Batch to_training_batch(Batch host, c10::Device device) {
  host.inputs[0] = to_device(host.inputs[0], device);
  for (auto& t : host.targets) t = to_device(t, device);
  return host;
}

}  // namespace tbd
