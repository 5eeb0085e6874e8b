// Elementary operations on boxes given as [N, 4] tensors of corners
// (x1, y1, x2, y2) in pixels, as torchvision.ops.boxes defines them.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace tbd::nn {

torch::Tensor box_area(const torch::Tensor& boxes);  // [N]

// Intersection over union of every pair: [N, M] for boxes a [N, 4], b [M, 4].
torch::Tensor box_iou(const torch::Tensor& a, const torch::Tensor& b);

// Clamps corners into an image of `height` × `width` pixels.
torch::Tensor clip_boxes_to_image(const torch::Tensor& boxes, int64_t height, int64_t width);

// Indices (int64) of the boxes whose sides are both at least `min_size`.
torch::Tensor remove_small_boxes(const torch::Tensor& boxes, double min_size);

}  // namespace tbd::nn
