#include "tbd/nn/region_proposal_network.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>

#include <algorithm>

#include "tbd/nn/detection/boxes.h"
#include "tbd/nn/detection/nms.h"
#include "tbd/nn/detection_losses.h"

namespace tbd::nn {
namespace F = torch::nn::functional;

RegionProposalNetworkImpl::RegionProposalNetworkImpl(int64_t channels, AnchorGenerator anchors, RpnConfig config)
    : anchors_(std::move(anchors)),
      config_(config),
      matcher_(config.foreground_iou, config.background_iou, /*allow_low_quality_matches=*/true),
      sampler_(config.samples_per_image, config.positive_fraction) {
  const int64_t a = anchors_.anchors_per_location(0);
  conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1)));
  cls_logits_ = register_module("cls_logits", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, a, 1)));
  bbox_pred_ = register_module("bbox_pred", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 4 * a, 1)));
  for (auto* c : {conv_.get(), cls_logits_.get(), bbox_pred_.get()}) {
    torch::nn::init::normal_(c->weight, 0.0, 0.01);
    torch::nn::init::zeros_(c->bias);
  }
}

std::vector<torch::Tensor> RegionProposalNetworkImpl::select_proposals(
    const torch::Tensor& boxes, const torch::Tensor& objectness, const std::vector<int64_t>& anchors_per_level,
    const std::vector<ImageSize>& image_sizes) const {
  // The best pre_nms_top_n anchors of each level, per image.
  std::vector<torch::Tensor> top, level_of;
  int64_t offset = 0;
  for (size_t l = 0; l < anchors_per_level.size(); ++l) {
    const int64_t n = anchors_per_level[l];
    const auto level_scores = objectness.narrow(1, offset, n);
    top.push_back(std::get<1>(level_scores.topk(std::min(config_.pre_nms_top_n, n), 1)) + offset);
    level_of.push_back(torch::full_like(top.back(), static_cast<int64_t>(l)));
    offset += n;
  }
  const auto index = torch::cat(top, 1), levels = torch::cat(level_of, 1);
  std::vector<torch::Tensor> proposals;
  for (size_t i = 0; i < image_sizes.size(); ++i) {
    const auto idx = index[static_cast<int64_t>(i)];
    auto b = clip_boxes_to_image(boxes[static_cast<int64_t>(i)].index_select(0, idx), image_sizes[i].first,
                                 image_sizes[i].second);
    auto scores = torch::sigmoid(objectness[static_cast<int64_t>(i)].index_select(0, idx));
    auto lvl = levels[static_cast<int64_t>(i)];
    const auto big = remove_small_boxes(b, config_.min_box_size);
    b = b.index_select(0, big), scores = scores.index_select(0, big), lvl = lvl.index_select(0, big);
    const auto keep = batched_nms(b, scores, lvl, config_.nms_threshold).slice(0, 0, config_.post_nms_top_n);
    proposals.push_back(b.index_select(0, keep));
  }
  return proposals;
}

RpnOutput RegionProposalNetworkImpl::forward(const std::vector<torch::Tensor>& features,
                                             const std::vector<ImageSize>& image_sizes, int64_t padded_height,
                                             int64_t padded_width, const std::vector<torch::Tensor>& gt_boxes) {
  const int64_t batch = features[0].size(0);
  std::vector<torch::Tensor> logits, deltas;
  std::vector<int64_t> anchors_per_level;
  std::vector<std::pair<int64_t, int64_t>> grids;
  for (const auto& f : features) {
    const auto t = F::relu(conv_(f));
    const int64_t h = f.size(2), w = f.size(3);
    const auto cls = cls_logits_(t), reg = bbox_pred_(t);
    const int64_t a = cls.size(1);
    // [B, A·C, H, W] → [B, H·W·A, C]: the anchor generator's order.
    logits.push_back(cls.view({batch, a, 1, h, w}).permute({0, 3, 4, 1, 2}).reshape({batch, -1}));
    deltas.push_back(reg.view({batch, a, 4, h, w}).permute({0, 3, 4, 1, 2}).reshape({batch, -1, 4}));
    anchors_per_level.push_back(h * w * a);
    grids.emplace_back(h, w);
  }
  const auto objectness = torch::cat(logits, 1);  // [B, A_total]
  const auto box_deltas = torch::cat(deltas, 1);  // [B, A_total, 4]
  const auto anchors = anchors_.generate(padded_height, padded_width, grids,
                                         torch::TensorOptions(torch::kFloat).device(objectness.device()));
  const int64_t total = anchors.size(0);

  RpnOutput out;
  {
    // Proposals do not carry gradients (Faster R-CNN's approximate joint training).
    torch::NoGradGuard no_grad;
    const auto decoded =
        coder_.decode(box_deltas.detach().reshape({-1, 4}).to(torch::kFloat), anchors.repeat({batch, 1}));
    out.proposals = select_proposals(decoded.view({batch, total, 4}), objectness.detach().to(torch::kFloat),
                                     anchors_per_level, image_sizes);
  }

  // Training targets: match, sample, encode.
  std::vector<torch::Tensor> sampled_pos, sampled_neg, pos_targets;
  torch::Tensor labels = torch::zeros({batch, total}, anchors.options());
  for (int64_t i = 0; i < batch; ++i) {
    torch::Tensor matched;
    const auto& gt = gt_boxes[static_cast<size_t>(i)];
    if (gt.size(0) > 0) {
      torch::NoGradGuard no_grad;
      matched = matcher_(box_iou(gt.to(torch::kFloat), anchors));
      labels[i] = torch::where(matched >= 0, 1.0, torch::where(matched == Matcher::kBetween, -1.0, 0.0));
    }
    const SampledIndices s = sampler_(labels[i]);
    if (s.positive.numel() > 0)
      pos_targets.push_back(coder_.encode(gt.to(torch::kFloat).index_select(0, matched.index_select(0, s.positive)),
                                          anchors.index_select(0, s.positive)));
    sampled_pos.push_back(s.positive + i * total);
    sampled_neg.push_back(s.negative + i * total);
  }
  const auto pos = torch::cat(sampled_pos), sampled = torch::cat({pos, torch::cat(sampled_neg)});
  const auto flat_objectness = objectness.reshape({-1});
  out.objectness_loss =
      F::binary_cross_entropy_with_logits(flat_objectness.index_select(0, sampled),
                                          labels.reshape({-1}).index_select(0, sampled).to(objectness.scalar_type()));
  const auto predicted = box_deltas.reshape({-1, 4}).index_select(0, pos);
  out.box_loss = pos_targets.empty() ? predicted.sum()
                                     : box_regression_loss_sum(predicted, torch::cat(pos_targets)) /
                                           static_cast<double>(sampled.numel());
  return out;
}

}  // namespace tbd::nn
