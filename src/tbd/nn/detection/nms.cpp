#include "tbd/nn/detection/nms.h"

#include <algorithm>
#include <vector>

namespace tbd::nn {

torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold) {
  const auto device = boxes.device();
  if (boxes.size(0) == 0) return torch::empty({0}, torch::TensorOptions(torch::kInt64).device(device));
  const auto order = std::get<1>(scores.detach().to(torch::kCPU, torch::kFloat).sort(0, /*descending=*/true));
  // Corners in score order, one contiguous array each, so the inner loop vectorises.
  const auto sorted = boxes.detach().to(torch::kCPU, torch::kFloat).index_select(0, order).t().contiguous();
  const int64_t n = sorted.size(1);
  const float* x1 = sorted[0].data_ptr<float>();
  const float* y1 = sorted[1].data_ptr<float>();
  const float* x2 = sorted[2].data_ptr<float>();
  const float* y2 = sorted[3].data_ptr<float>();
  std::vector<float> area(n);
  for (int64_t i = 0; i < n; ++i) area[i] = (x2[i] - x1[i]) * (y2[i] - y1[i]);
  const auto threshold = static_cast<float>(iou_threshold);
  std::vector<unsigned char> suppressed(n, 0);
  std::vector<int64_t> keep;
  const int64_t* original = order.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (suppressed[i]) continue;
    keep.push_back(original[i]);
    // Branch-free over all later boxes: suppressing an already suppressed one is harmless.
    for (int64_t j = i + 1; j < n; ++j) {
      const float w = std::max(0.0f, std::min(x2[i], x2[j]) - std::max(x1[i], x1[j]));
      const float h = std::max(0.0f, std::min(y2[i], y2[j]) - std::max(y1[i], y1[j]));
      const float inter = w * h;
      suppressed[j] |= static_cast<unsigned char>(inter > threshold * (area[i] + area[j] - inter));
    }
  }
  return torch::tensor(keep, torch::kInt64).to(device);
}

torch::Tensor batched_nms(const torch::Tensor& boxes, const torch::Tensor& scores, const torch::Tensor& groups,
                          double iou_threshold) {
  if (boxes.size(0) == 0) return torch::empty({0}, boxes.options().dtype(torch::kInt64));
  // One NMS per group (quadratic cost grows with the group, not the total),
  // then all kept boxes in decreasing score order, as torchvision returns them.
  const auto host_groups = groups.to(torch::kCPU);
  std::vector<torch::Tensor> kept;
  for (const auto& g : std::get<0>(at::_unique(host_groups)).unbind()) {
    const auto members = torch::nonzero(host_groups == g).squeeze(1).to(boxes.device());
    kept.push_back(
        members.index_select(0, nms(boxes.index_select(0, members), scores.index_select(0, members), iou_threshold)));
  }
  const auto all = torch::cat(kept);
  const auto by_score = std::get<1>(scores.index_select(0, all).sort(0, /*descending=*/true));
  return all.index_select(0, by_score);
}

}  // namespace tbd::nn
