// The Fast R-CNN stage of Faster R-CNN as torchvision's RoIHeads with
// TwoMLPHead and FastRCNNPredictor: the ground-truth boxes join the
// proposals, proposals are matched (IoU ≥ 0.5 foreground, else
// background), 512 per image are sampled at up to a quarter foreground,
// pooled by 7×7 multi-scale RoIAlign (sampling ratio 2), passed through two
// 1024-wide fully connected layers, and classified (cross-entropy) and
// regressed per class (smooth L1 on the foreground's true class, box coder
// weights 10, 10, 5, 5).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "tbd/nn/detection/balanced_sampler.h"
#include "tbd/nn/detection/box_coder.h"
#include "tbd/nn/detection/matcher.h"
#include "tbd/nn/detection/multi_scale_roi_align.h"

namespace tbd::nn {

struct RoIHeadsConfig {
  int64_t pooled_size = 7, sampling_ratio = 2;
  int64_t representation = 1024;  // width of the two fully connected layers
  double foreground_iou = 0.5, background_iou = 0.5;
  int64_t samples_per_image = 512;
  double positive_fraction = 0.25;
};

struct RoIHeadsLosses {
  torch::Tensor classifier, box_regression;
};

class RoIHeadsImpl : public torch::nn::Module {
 public:
  RoIHeadsImpl(int64_t channels, int64_t classes, RoIHeadsConfig config);

  // features: the pyramid levels RoIAlign pools from (finest first);
  // image_height: the largest unpadded image height of the batch.
  RoIHeadsLosses forward(const std::vector<torch::Tensor>& features, const std::vector<torch::Tensor>& proposals,
                         const std::vector<torch::Tensor>& gt_boxes, const std::vector<torch::Tensor>& gt_labels,
                         int64_t image_height);

 private:
  torch::nn::Linear fc6_{nullptr}, fc7_{nullptr}, cls_score_{nullptr}, bbox_pred_{nullptr};
  RoIHeadsConfig config_;
  MultiScaleRoIAlign pooler_;
  BoxCoder coder_{{10, 10, 5, 5}};
  Matcher matcher_;
  BalancedSampler sampler_;
};
TORCH_MODULE(RoIHeads);

}  // namespace tbd::nn
