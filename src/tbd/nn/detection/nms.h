// Non-maximum suppression as torchvision.ops.nms: greedily keep the highest
// scoring box and drop every remaining box whose IoU with it exceeds the
// threshold. The greedy scan is sequential, so it runs on the host (boxes are
// copied there when they live on an accelerator); the indices come back on
// the boxes' device.
#pragma once

#include <torch/types.h>

namespace tbd::nn {

// Indices (int64) of the kept boxes, in decreasing score order.
torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iou_threshold);

// NMS independently within each group (`groups`: int64 [N], e.g. the FPN
// level or the class); the kept indices come in decreasing score order.
torch::Tensor batched_nms(const torch::Tensor& boxes, const torch::Tensor& scores, const torch::Tensor& groups,
                          double iou_threshold);

}  // namespace tbd::nn
