#include "tbd/nn/faster_rcnn.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "tbd/nn/frozen_batch_norm.h"
#include "tbd/nn/layer_scope.h"

namespace tbd::nn {

namespace {
ResNetConfig backbone_config(const FasterRcnnConfig& c) {
  ResNetConfig r;
  r.depth = c.depth;
  r.width = c.width;
  r.blocks = c.blocks;
  r.frozen_batch_norm = true;
  r.classifier = false;
  return r;
}
}  // namespace

FasterRcnnImpl::FasterRcnnImpl(const FasterRcnnConfig& config) {
  if (config.anchor_sizes.size() != 5)
    throw std::invalid_argument("FasterRcnn: anchor sizes for 5 pyramid levels expected");
  backbone_ = register_module("backbone", ResNet(backbone_config(config)));
  const auto channels = backbone_->stage_channels();
  fpn_ = register_module("fpn",
                         FeaturePyramid(std::vector<int64_t>(channels.begin(), channels.end()), config.fpn_channels));
  rpn_ = register_module(
      "rpn", RegionProposalNetwork(config.fpn_channels, AnchorGenerator(config.anchor_sizes, config.aspect_ratios),
                                   config.rpn));
  roi_heads_ = register_module("roi_heads", RoIHeads(config.fpn_channels, config.classes, config.heads));

  // torchvision's resnet_fpn_backbone: only the top `trainable` of
  // (layer4, layer3, layer2, layer1, conv1) train; the rest are frozen.
  const std::vector<std::string> top_down = {"layer4", "layer3", "layer2", "layer1", "conv1"};
  const int trainable = std::clamp(config.trainable_backbone_layers, 0, 5);
  for (auto& p : backbone_->named_parameters()) {
    const bool trains = std::any_of(top_down.begin(), top_down.begin() + trainable,
                                    [&](const std::string& prefix) { return p.key().rfind(prefix, 0) == 0; });
    if (!trains) p.value().set_requires_grad(false);
  }
}

FasterRcnnLosses FasterRcnnImpl::forward(const torch::Tensor& images, const std::vector<ImageSize>& image_sizes,
                                         const std::vector<torch::Tensor>& gt_boxes,
                                         const std::vector<torch::Tensor>& gt_labels) {
  std::vector<torch::Tensor> stages, pyramid;
  {
    LayerScope layer("backbone");
    stages = backbone_->stage_outputs(images);
  }
  {
    LayerScope layer("fpn");
    pyramid = fpn_(stages);
  }
  std::optional<LayerScope> layer(std::in_place, "rpn");
  const RpnOutput rpn = rpn_(pyramid, image_sizes, images.size(2), images.size(3), gt_boxes);
  layer.reset();
  int64_t max_height = 0;
  for (const auto& s : image_sizes) max_height = std::max(max_height, s.first);
  // RoIAlign pools from the four stage levels, not the extra pooled one.
  const std::vector<torch::Tensor> pooled_levels(pyramid.begin(), pyramid.end() - 1);
  layer.emplace("roi_heads");
  const RoIHeadsLosses heads = roi_heads_(pooled_levels, rpn.proposals, gt_boxes, gt_labels, max_height);
  return {rpn.objectness_loss, rpn.box_loss, heads.classifier, heads.box_regression};
}

void FasterRcnnImpl::calibrate(const torch::Tensor& images) {
  calibrate_frozen_batch_norms(*backbone_, [&] { backbone_->stage_outputs(images); });
}

}  // namespace tbd::nn
