#include "tbd/data/image_transforms.h"

#include <torch/nn/functional/upsampling.h>

#include <algorithm>
#include <cmath>

namespace tbd {

CropBox random_resized_crop_box(int height, int width, std::mt19937_64& rng) {
  const double area = static_cast<double>(height) * width;
  std::uniform_real_distribution<double> scale(0.08, 1.0);
  std::uniform_real_distribution<double> log_ratio(std::log(3.0 / 4.0), std::log(4.0 / 3.0));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * scale(rng);
    const double ratio = std::exp(log_ratio(rng));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int top = std::uniform_int_distribution<int>(0, height - h)(rng);
      const int left = std::uniform_int_distribution<int>(0, width - w)(rng);
      return {top, left, h, w};
    }
  }
  // Fallback: the whole image, clamped to the allowed aspect ratios, centred.
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < 3.0 / 4.0) {
    h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
  } else if (in_ratio > 4.0 / 3.0) {
    w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
  }
  h = std::min(h, height);
  w = std::min(w, width);
  return {(height - h) / 2, (width - w) / 2, h, w};
}

namespace {
// [3, H, W] uint8 region of an image -> float, resized to size × size.
torch::Tensor resize_region(const RgbImage& image, const CropBox& box, int size) {
  auto hwc = torch::from_blob(const_cast<uint8_t*>(image.pixels.data()), {image.height, image.width, 3}, torch::kUInt8);
  auto crop = hwc.slice(0, box.top, box.top + box.height)
                  .slice(1, box.left, box.left + box.width)
                  .permute({2, 0, 1})
                  .to(torch::kFloat)
                  .unsqueeze(0);
  namespace F = torch::nn::functional;
  return F::interpolate(crop, F::InterpolateFuncOptions()
                                  .size(std::vector<int64_t>{size, size})
                                  .mode(torch::kBilinear)
                                  .align_corners(false)
                                  .antialias(true))
      .squeeze(0);
}
}  // namespace

torch::Tensor augment_for_training(const RgbImage& image, int size, std::mt19937_64& rng) {
  const CropBox box = random_resized_crop_box(image.height, image.width, rng);
  auto resized = resize_region(image, box, size);
  if (std::bernoulli_distribution(0.5)(rng)) resized = resized.flip({2});
  static const auto mean = torch::tensor({0.485f, 0.456f, 0.406f}).view({3, 1, 1}) * 255.0f;
  static const auto stddev = torch::tensor({0.229f, 0.224f, 0.225f}).view({3, 1, 1}) * 255.0f;
  return ((resized - mean) / stddev).contiguous();
}

torch::Tensor resize_to_tanh_range(const RgbImage& image, int size) {
  const auto resized = resize_region(image, {0, 0, image.height, image.width}, size);
  return (resized / 127.5f - 1.0f).clamp(-1.0f, 1.0f).contiguous();  // only float rounding can leave the range
}

}  // namespace tbd
