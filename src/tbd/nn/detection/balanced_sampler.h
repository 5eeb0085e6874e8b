// Picks a fixed-size training sample of predictions per image with at most a
// given share of positives (torchvision's BalancedPositiveNegativeSampler):
// up to size·fraction positives drawn at random, the rest from negatives.
// Uses LibTorch's global generator, so seeded runs repeat.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace tbd::nn {

struct SampledIndices {
  torch::Tensor positive, negative;  // int64 indices into the labels
};

class BalancedSampler {
 public:
  BalancedSampler(int64_t per_image, double positive_fraction);
  // labels: ≥ 1 positive, 0 negative, < 0 ignored.
  SampledIndices operator()(const torch::Tensor& labels) const;

 private:
  int64_t per_image_;
  double positive_fraction_;
};

}  // namespace tbd::nn
