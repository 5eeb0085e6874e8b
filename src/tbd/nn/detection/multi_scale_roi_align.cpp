#include "tbd/nn/detection/multi_scale_roi_align.h"

#include <cmath>

#include "tbd/nn/detection/boxes.h"
#include "tbd/nn/detection/roi_align.h"

namespace tbd::nn {

namespace {
constexpr double kCanonicalScale = 224, kCanonicalLevel = 4, kEps = 1e-6;

double level_scale(const torch::Tensor& feature, int64_t image_height) {
  const double approx = static_cast<double>(feature.size(2)) / static_cast<double>(image_height);
  return std::pow(2.0, std::round(std::log2(approx)));
}
}  // namespace

torch::Tensor map_boxes_to_levels(const torch::Tensor& boxes, int64_t k_min, int64_t k_max) {
  const auto side = torch::sqrt(box_area(boxes));
  const auto level = torch::floor(kCanonicalLevel + torch::log2(side / kCanonicalScale + kEps));
  return level.clamp(static_cast<double>(k_min), static_cast<double>(k_max)).to(torch::kInt64) - k_min;
}

torch::Tensor MultiScaleRoIAlign::operator()(const std::vector<torch::Tensor>& features,
                                             const std::vector<torch::Tensor>& boxes, int64_t image_height) const {
  std::vector<torch::Tensor> rois;
  for (size_t i = 0; i < boxes.size(); ++i) {
    const auto b = boxes[i].detach().to(features[0].scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat);
    rois.push_back(torch::cat({torch::full({b.size(0), 1}, static_cast<double>(i), b.options()), b}, 1));
  }
  const auto all = torch::cat(rois);
  const int64_t C = features[0].size(1);
  if (features.size() == 1)
    return roi_align(features[0], all, level_scale(features[0], image_height), output_size_, sampling_ratio_);

  const auto k_min = static_cast<int64_t>(std::lround(-std::log2(level_scale(features.front(), image_height))));
  const auto k_max = static_cast<int64_t>(std::lround(-std::log2(level_scale(features.back(), image_height))));
  const auto levels = map_boxes_to_levels(all.slice(1, 1, 5), k_min, k_max);
  auto result = torch::zeros({all.size(0), C, output_size_, output_size_}, features[0].options());
  for (size_t l = 0; l < features.size(); ++l) {
    const auto in_level = torch::nonzero(levels == static_cast<int64_t>(l)).squeeze(1);
    if (in_level.numel() == 0) continue;
    const auto pooled = roi_align(features[l], all.index_select(0, in_level), level_scale(features[l], image_height),
                                  output_size_, sampling_ratio_);
    result = result.index_copy(0, in_level, pooled);  // out of place: autograd flows to `pooled`
  }
  return result;
}

}  // namespace tbd::nn
