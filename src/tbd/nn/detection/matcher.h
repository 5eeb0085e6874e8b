// Assigns each prediction (anchor or proposal) the ground-truth box it
// overlaps most, as torchvision's Matcher: IoU ≥ high → that box's index;
// IoU < low → kBelowLow; in between → kBetween (ignored). With
// low-quality matches allowed (the RPN), every ground-truth box also claims
// the predictions it overlaps most, even below the high threshold.
#pragma once

#include <torch/types.h>

namespace tbd::nn {

class Matcher {
 public:
  static constexpr int64_t kBelowLow = -1;
  static constexpr int64_t kBetween = -2;

  Matcher(double high_threshold, double low_threshold, bool allow_low_quality_matches);

  // quality: IoU [G, P] of G ground-truth boxes (G ≥ 1) and P predictions;
  // returns int64 [P].
  torch::Tensor operator()(const torch::Tensor& quality) const;

 private:
  double high_, low_;
  bool allow_low_quality_;
};

}  // namespace tbd::nn
