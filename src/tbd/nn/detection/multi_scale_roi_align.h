// RoIAlign over a feature pyramid (torchvision's MultiScaleRoIAlign): each box
// is pooled from the level the FPN paper's heuristic assigns it,
// k = ⌊4 + log2(√area / 224)⌋ clamped to the pyramid's levels, where a
// level's scale is its size over the (unpadded) image size rounded to a
// power of two.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace tbd::nn {

// Pyramid level index (0 = finest) of each box, for levels k_min … k_max.
torch::Tensor map_boxes_to_levels(const torch::Tensor& boxes, int64_t k_min, int64_t k_max);

class MultiScaleRoIAlign {
 public:
  MultiScaleRoIAlign(int64_t output_size, int64_t sampling_ratio)
      : output_size_(output_size), sampling_ratio_(sampling_ratio) {}

  // features: finest first; boxes[i]: image i's boxes [K_i, 4];
  // image_height: the largest unpadded image height of the batch.
  // Returns [Σ K_i, C, output_size, output_size], boxes in input order.
  torch::Tensor operator()(const std::vector<torch::Tensor>& features, const std::vector<torch::Tensor>& boxes,
                           int64_t image_height) const;

 private:
  int64_t output_size_, sampling_ratio_;
};

}  // namespace tbd::nn
