#include "tbd/data/synthetic_detection.h"

#include <algorithm>

namespace tbd {

namespace {
// Uniform in [lo, hi) from the generator.
double uniform(at::Generator& g, double lo, double hi) { return torch::empty({1}).uniform_(lo, hi, g).item<double>(); }
}  // namespace

LabelledImage synthetic_detection_image(at::Generator& generator, int64_t long_side, int64_t classes) {
  const int64_t short_side = long_side * 3 / 4;
  const bool landscape = uniform(generator, 0, 1) < 0.7;  // most VOC pictures are landscape
  const int64_t h = landscape ? short_side : long_side, w = landscape ? long_side : short_side;
  auto image = torch::empty({3, h, w}).uniform_(0.0, 1.0, generator) * 0.3 + uniform(generator, 0.2, 0.5);
  const auto objects = static_cast<int64_t>(uniform(generator, 1, 6));
  auto boxes = torch::empty({objects, 4});
  auto labels = torch::empty({objects}, torch::kInt64);
  for (int64_t k = 0; k < objects; ++k) {
    const auto bw = static_cast<int64_t>(uniform(generator, 0.1, 0.8) * static_cast<double>(w));
    const auto bh = static_cast<int64_t>(uniform(generator, 0.1, 0.8) * static_cast<double>(h));
    const auto x1 = static_cast<int64_t>(uniform(generator, 0, static_cast<double>(w - bw)));
    const auto y1 = static_cast<int64_t>(uniform(generator, 0, static_cast<double>(h - bh)));
    const auto label = static_cast<int64_t>(uniform(generator, 1, static_cast<double>(classes)));
    // A colour per class, spread over the RGB cube.
    const auto colour =
        torch::tensor({static_cast<float>((label * 37) % 100) / 100.0f, static_cast<float>((label * 59) % 100) / 100.0f,
                       static_cast<float>((label * 83) % 100) / 100.0f})
            .view({3, 1, 1});
    image.narrow(1, y1, bh).narrow(2, x1, bw).mul_(0.2).add_(colour * 0.8);
    boxes[k] = torch::tensor(
        {static_cast<float>(x1), static_cast<float>(y1), static_cast<float>(x1 + bw), static_cast<float>(y1 + bh)});
    labels[k] = label;
  }
  return {image.clamp(0, 1), boxes, labels};
}

}  // namespace tbd
