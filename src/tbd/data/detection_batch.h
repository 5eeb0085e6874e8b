// Detection images made into a training batch as torchvision's
// GeneralizedRCNNTransform does: each image resized (bilinear) so its
// shorter side is min_size unless the longer side would exceed max_size,
// boxes scaled with it, pixels normalised with the ImageNet mean and
// standard deviation, and the batch zero-padded to a common size rounded up
// to a multiple of 32.
//
// Batch layout (the faster_rcnn workload's):
//   inputs  = {images [B, 3, H, W] float, image_sizes [B, 2] int64 on the CPU (height, width before padding)}
//   targets = {boxes_0 [G_0, 4], labels_0 [G_0], boxes_1, labels_1, …}
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "tbd/core/workload.h"

namespace tbd {

struct LabelledImage {
  torch::Tensor image;   // float [3, H, W], RGB in [0, 1]
  torch::Tensor boxes;   // float [G, 4], x1, y1, x2, y2 in pixels
  torch::Tensor labels;  // int64 [G], 1 … classes−1
};

struct DetectionSizes {
  int64_t min_size = 600, max_size = 1000;
};

// Resizes one image and its boxes (no normalisation).
LabelledImage resize_for_detection(const LabelledImage& sample, const DetectionSizes& sizes);

// Resized, normalised, padded and moved to `device`.
Batch make_detection_batch(const std::vector<LabelledImage>& samples, const DetectionSizes& sizes, c10::Device device);

// A detection batch read on the host, moved to `device`: the images and every
// image's boxes and labels; the image sizes (inputs[1]) stay on the host.
Batch to_training_batch(Batch host, c10::Device device);

}  // namespace tbd
