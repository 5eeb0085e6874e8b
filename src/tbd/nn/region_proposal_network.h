// Region Proposal Network (Ren et al. 2015) over a feature pyramid, as
// torchvision's RegionProposalNetwork: a shared 3×3 conv head predicts an
// objectness logit and four box deltas per anchor; the best pre_nms_top_n
// anchors of each level are decoded, clipped, stripped of tiny boxes and
// suppressed per level (NMS 0.7), and the best post_nms_top_n remain as
// proposals. Training: anchors are matched to ground truth (IoU ≥ 0.7
// positive, < 0.3 negative, each box also claims its best anchors), 256
// per image are sampled at up to half positive, and the losses are binary
// cross-entropy on objectness and smooth L1 on the positives' deltas.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "tbd/nn/detection/anchor_generator.h"
#include "tbd/nn/detection/balanced_sampler.h"
#include "tbd/nn/detection/box_coder.h"
#include "tbd/nn/detection/matcher.h"

namespace tbd::nn {

struct RpnConfig {
  int64_t pre_nms_top_n = 2000;   // per pyramid level (training value)
  int64_t post_nms_top_n = 2000;  // per image (training value)
  double nms_threshold = 0.7;
  double foreground_iou = 0.7, background_iou = 0.3;
  int64_t samples_per_image = 256;
  double positive_fraction = 0.5;
  double min_box_size = 1e-3;
};

using ImageSize = std::pair<int64_t, int64_t>;  // height, width (unpadded)

struct RpnOutput {
  std::vector<torch::Tensor> proposals;  // per image [K_i, 4], detached
  torch::Tensor objectness_loss, box_loss;
};

class RegionProposalNetworkImpl : public torch::nn::Module {
 public:
  RegionProposalNetworkImpl(int64_t channels, AnchorGenerator anchors, RpnConfig config);

  // features: pyramid levels, finest first, of a batch padded to
  // padded_height × padded_width; gt_boxes[i]: image i's boxes [G_i, 4].
  RpnOutput forward(const std::vector<torch::Tensor>& features, const std::vector<ImageSize>& image_sizes,
                    int64_t padded_height, int64_t padded_width, const std::vector<torch::Tensor>& gt_boxes);

 private:
  std::vector<torch::Tensor> select_proposals(const torch::Tensor& boxes, const torch::Tensor& objectness,
                                              const std::vector<int64_t>& anchors_per_level,
                                              const std::vector<ImageSize>& image_sizes) const;

  torch::nn::Conv2d conv_{nullptr}, cls_logits_{nullptr}, bbox_pred_{nullptr};
  AnchorGenerator anchors_;
  RpnConfig config_;
  BoxCoder coder_{{1, 1, 1, 1}};
  Matcher matcher_;
  BalancedSampler sampler_;
};
TORCH_MODULE(RegionProposalNetwork);

}  // namespace tbd::nn
