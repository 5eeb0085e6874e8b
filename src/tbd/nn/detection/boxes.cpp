#include "tbd/nn/detection/boxes.h"

namespace tbd::nn {

torch::Tensor box_area(const torch::Tensor& boxes) {
  return (boxes.select(1, 2) - boxes.select(1, 0)) * (boxes.select(1, 3) - boxes.select(1, 1));
}

torch::Tensor box_iou(const torch::Tensor& a, const torch::Tensor& b) {
  const auto area_a = box_area(a), area_b = box_area(b);
  const auto top_left = torch::max(a.slice(1, 0, 2).unsqueeze(1), b.slice(1, 0, 2).unsqueeze(0));
  const auto bottom_right = torch::min(a.slice(1, 2, 4).unsqueeze(1), b.slice(1, 2, 4).unsqueeze(0));
  const auto wh = (bottom_right - top_left).clamp_min(0);
  const auto inter = wh.select(2, 0) * wh.select(2, 1);
  return inter / (area_a.unsqueeze(1) + area_b.unsqueeze(0) - inter);
}

torch::Tensor clip_boxes_to_image(const torch::Tensor& boxes, int64_t height, int64_t width) {
  auto x = boxes.slice(1, 0, 4, 2).clamp(0, static_cast<double>(width));
  auto y = boxes.slice(1, 1, 4, 2).clamp(0, static_cast<double>(height));
  return torch::stack({x.select(1, 0), y.select(1, 0), x.select(1, 1), y.select(1, 1)}, 1);
}

torch::Tensor remove_small_boxes(const torch::Tensor& boxes, double min_size) {
  const auto w = boxes.select(1, 2) - boxes.select(1, 0);
  const auto h = boxes.select(1, 3) - boxes.select(1, 1);
  return torch::nonzero((w >= min_size) & (h >= min_size)).squeeze(1);
}

}  // namespace tbd::nn
