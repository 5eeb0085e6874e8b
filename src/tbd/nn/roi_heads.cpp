#include "tbd/nn/roi_heads.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>

#include "tbd/nn/detection/boxes.h"
#include "tbd/nn/detection_losses.h"

namespace tbd::nn {
namespace F = torch::nn::functional;

RoIHeadsImpl::RoIHeadsImpl(int64_t channels, int64_t classes, RoIHeadsConfig config)
    : config_(config),
      pooler_(config.pooled_size, config.sampling_ratio),
      matcher_(config.foreground_iou, config.background_iou, /*allow_low_quality_matches=*/false),
      sampler_(config.samples_per_image, config.positive_fraction) {
  const int64_t in = channels * config.pooled_size * config.pooled_size;
  fc6_ = register_module("fc6", torch::nn::Linear(in, config.representation));
  fc7_ = register_module("fc7", torch::nn::Linear(config.representation, config.representation));
  cls_score_ = register_module("cls_score", torch::nn::Linear(config.representation, classes));
  bbox_pred_ = register_module("bbox_pred", torch::nn::Linear(config.representation, classes * 4));
}

RoIHeadsLosses RoIHeadsImpl::forward(const std::vector<torch::Tensor>& features,
                                     const std::vector<torch::Tensor>& proposals,
                                     const std::vector<torch::Tensor>& gt_boxes,
                                     const std::vector<torch::Tensor>& gt_labels, int64_t image_height) {
  std::vector<torch::Tensor> sampled_boxes, labels, targets;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < proposals.size(); ++i) {
      const auto gt = gt_boxes[i].to(proposals[i].scalar_type());
      const auto candidates = torch::cat({proposals[i], gt});  // ground truth joins the proposals
      torch::Tensor matched, image_labels;
      if (gt.size(0) == 0) {
        matched = torch::zeros({candidates.size(0)}, candidates.options().dtype(torch::kInt64));
        image_labels = torch::zeros_like(matched);
      } else {
        const auto m = matcher_(box_iou(gt, candidates));
        matched = m.clamp_min(0);
        image_labels = gt_labels[i].index_select(0, matched);
        image_labels.masked_fill_(m == Matcher::kBelowLow, 0);
        image_labels.masked_fill_(m == Matcher::kBetween, -1);
      }
      const SampledIndices s = sampler_(image_labels);
      const auto keep = torch::cat({s.positive, s.negative});
      const auto boxes = candidates.index_select(0, keep);
      const auto matched_gt =
          gt.size(0) == 0 ? torch::zeros_like(boxes) : gt.index_select(0, matched.index_select(0, keep));
      sampled_boxes.push_back(boxes);
      labels.push_back(image_labels.index_select(0, keep));
      targets.push_back(coder_.encode(matched_gt, boxes));
    }
  }
  auto x = pooler_(features, sampled_boxes, image_height).flatten(1);
  x = F::relu(fc7_(F::relu(fc6_(x))));
  const auto class_logits = cls_score_(x), box_deltas = bbox_pred_(x);

  const auto all_labels = torch::cat(labels), all_targets = torch::cat(targets);
  RoIHeadsLosses losses;
  losses.classifier = F::cross_entropy(class_logits, all_labels);
  const auto foreground = torch::nonzero(all_labels > 0).squeeze(1);
  const auto predicted =
      box_deltas.view({box_deltas.size(0), -1, 4}).index({foreground, all_labels.index_select(0, foreground)});
  losses.box_regression = box_regression_loss_sum(predicted, all_targets.index_select(0, foreground)) /
                          static_cast<double>(all_labels.numel());
  return losses;
}

}  // namespace tbd::nn
