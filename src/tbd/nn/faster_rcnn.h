// Faster R-CNN (Ren et al. 2015) with a ResNet-FPN backbone as torchvision's
// fasterrcnn_resnet50_fpn builds it: ResNet with frozen batch norm (stem and
// first stage frozen as well, trainable_backbone_layers = 3), a feature
// pyramid over the four stages plus a pooled level, the region proposal
// network and the Fast R-CNN box head. Training returns the four losses.
// Images arrive normalised, resized and padded (data/detection_batch.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "tbd/nn/feature_pyramid.h"
#include "tbd/nn/region_proposal_network.h"
#include "tbd/nn/resnet.h"
#include "tbd/nn/roi_heads.h"

namespace tbd::nn {

struct FasterRcnnConfig {
  int depth = 101;              // ResNet depth of the backbone (50 or 101 published)
  int64_t width = 64;           // ResNet stem width
  std::array<int, 4> blocks{};  // zeros: published block counts for `depth`
  int64_t classes = 21;         // including background
  int64_t fpn_channels = 256;
  std::vector<std::vector<double>> anchor_sizes = {{32}, {64}, {128}, {256}, {512}};  // per pyramid level
  std::vector<double> aspect_ratios = {0.5, 1.0, 2.0};
  int trainable_backbone_layers = 3;  // of conv1, layer1 … layer4, counted from the top
  RpnConfig rpn;
  RoIHeadsConfig heads;
};

struct FasterRcnnLosses {
  torch::Tensor rpn_objectness, rpn_box_regression, classifier, box_regression;
  torch::Tensor total() const { return rpn_objectness + rpn_box_regression + classifier + box_regression; }
};

class FasterRcnnImpl : public torch::nn::Module {
 public:
  explicit FasterRcnnImpl(const FasterRcnnConfig& config);

  // images [B, 3, H, W] padded; image_sizes[i]: image i's size before padding;
  // gt_boxes[i] [G_i, 4] in pixels of the resized image; gt_labels[i] [G_i] in 1 … classes−1.
  FasterRcnnLosses forward(const torch::Tensor& images, const std::vector<ImageSize>& image_sizes,
                           const std::vector<torch::Tensor>& gt_boxes, const std::vector<torch::Tensor>& gt_labels);

  // Takes the frozen batch-norm statistics from one batch (see frozen_batch_norm.h).
  void calibrate(const torch::Tensor& images);

 private:
  ResNet backbone_{nullptr};
  FeaturePyramid fpn_{nullptr};
  RegionProposalNetwork rpn_{nullptr};
  RoIHeads roi_heads_{nullptr};
};
TORCH_MODULE(FasterRcnn);

}  // namespace tbd::nn
