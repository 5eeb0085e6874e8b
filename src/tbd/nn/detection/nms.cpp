#include "tbd/nn/detection/nms.h"

#include <algorithm>
#include <vector>

namespace tbd::nn {

torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold) {
  const auto device = boxes.device();
  if (boxes.size(0) == 0) return torch::empty({0}, torch::TensorOptions(torch::kInt64).device(device));
  const auto host_boxes = boxes.detach().to(torch::kCPU, torch::kFloat).contiguous();
  const auto order = std::get<1>(scores.detach().to(torch::kCPU, torch::kFloat).sort(0, /*descending=*/true));
  const int64_t n = host_boxes.size(0);
  const auto b = host_boxes.accessor<float, 2>();
  const auto o = order.accessor<int64_t, 1>();
  std::vector<float> area(n);
  for (int64_t i = 0; i < n; ++i) area[i] = (b[i][2] - b[i][0]) * (b[i][3] - b[i][1]);
  std::vector<char> suppressed(n, 0);
  std::vector<int64_t> keep;
  for (int64_t rank = 0; rank < n; ++rank) {
    const int64_t i = o[rank];
    if (suppressed[i]) continue;
    keep.push_back(i);
    for (int64_t later = rank + 1; later < n; ++later) {
      const int64_t j = o[later];
      if (suppressed[j]) continue;
      const float w = std::max(0.0f, std::min(b[i][2], b[j][2]) - std::max(b[i][0], b[j][0]));
      const float h = std::max(0.0f, std::min(b[i][3], b[j][3]) - std::max(b[i][1], b[j][1]));
      const float inter = w * h;
      if (inter / (area[i] + area[j] - inter) > iou_threshold) suppressed[j] = 1;
    }
  }
  return torch::tensor(keep, torch::kInt64).to(device);
}

torch::Tensor batched_nms(const torch::Tensor& boxes, const torch::Tensor& scores,
                          const torch::Tensor& groups, double iou_threshold) {
  if (boxes.size(0) == 0) return torch::empty({0}, boxes.options().dtype(torch::kInt64));
  // Boxes of different groups are moved so far apart that they never overlap.
  const auto offsets = groups.to(boxes.scalar_type()) * (boxes.max() + 1);
  return nms(boxes + offsets.unsqueeze(1), scores, iou_threshold);
}

}  // namespace tbd::nn
