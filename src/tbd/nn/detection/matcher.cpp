#include "tbd/nn/detection/matcher.h"

#include <stdexcept>

namespace tbd::nn {

Matcher::Matcher(double high_threshold, double low_threshold, bool allow_low_quality_matches)
    : high_(high_threshold), low_(low_threshold), allow_low_quality_(allow_low_quality_matches) {
  if (low_threshold > high_threshold) throw std::invalid_argument("Matcher: low threshold above high threshold");
}

torch::Tensor Matcher::operator()(const torch::Tensor& quality) const {
  if (quality.size(0) == 0) throw std::invalid_argument("Matcher: no ground-truth boxes to match");
  auto [best, matches] = quality.max(0);
  const auto all_matches = matches.clone();
  matches.masked_fill_(best < low_, kBelowLow);
  matches.masked_fill_((best >= low_) & (best < high_), kBetween);
  if (allow_low_quality_) {
    // Predictions that tie for the best overlap of some ground-truth box keep
    // their best match whatever its quality.
    const auto best_per_gt = std::get<0>(quality.max(1));
    const auto claimed = (quality == best_per_gt.unsqueeze(1)).any(0);
    matches = torch::where(claimed, all_matches, matches);
  }
  return matches;
}

}  // namespace tbd::nn
