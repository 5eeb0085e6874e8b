#include "tbd/nn/detection/balanced_sampler.h"

#include <algorithm>

namespace tbd::nn {

BalancedSampler::BalancedSampler(int64_t per_image, double positive_fraction)
    : per_image_(per_image), positive_fraction_(positive_fraction) {}

SampledIndices BalancedSampler::operator()(const torch::Tensor& labels) const {
  const auto positive = torch::nonzero(labels >= 1).squeeze(1);
  const auto negative = torch::nonzero(labels == 0).squeeze(1);
  const int64_t num_pos =
      std::min(positive.numel(), static_cast<int64_t>(static_cast<double>(per_image_) * positive_fraction_));
  const int64_t num_neg = std::min(negative.numel(), per_image_ - num_pos);
  const auto pick = [](const torch::Tensor& candidates, int64_t n) {
    return candidates.index_select(0, torch::randperm(candidates.numel(), candidates.options()).slice(0, 0, n));
  };
  return {pick(positive, num_pos), pick(negative, num_neg)};
}

}  // namespace tbd::nn
