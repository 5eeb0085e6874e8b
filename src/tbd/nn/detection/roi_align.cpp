#include "tbd/nn/detection/roi_align.h"

#include <stdexcept>

namespace tbd::nn {

namespace {

// Bilinear neighbours along one axis for sampling coordinates `coords`
// [R, S]: the lower and upper pixel index and their weights, zero weights
// for points beyond one pixel outside [0, size].
struct AxisTaps {
  torch::Tensor low, high;                // int64 [R, S]
  torch::Tensor low_weight, high_weight;  // [R, S]
};

AxisTaps axis_taps(torch::Tensor coords, int64_t size) {
  const auto inside = ((coords >= -1.0) & (coords <= static_cast<double>(size))).to(coords.scalar_type());
  coords = coords.clamp_min(0);
  auto low = coords.floor().to(torch::kInt64);
  // At the last pixel both neighbours are that pixel, with the full weight on it.
  const auto at_edge = low >= size - 1;
  low = low.clamp_max(size - 1);
  const auto high = torch::where(at_edge, low, low + 1);
  const auto frac = torch::where(at_edge, torch::zeros_like(coords), coords - low.to(coords.scalar_type()));
  return {low, high, (1 - frac) * inside, frac * inside};
}

}  // namespace

torch::Tensor roi_align(const torch::Tensor& features, const torch::Tensor& rois, double spatial_scale,
                        int64_t output_size, int64_t sampling_ratio) {
  if (features.dim() != 4 || rois.dim() != 2 || rois.size(1) != 5)
    throw std::invalid_argument("roi_align: expects features [N, C, H, W] and rois [R, 5]");
  if (sampling_ratio < 1) throw std::invalid_argument("roi_align: sampling_ratio must be at least 1");
  const int64_t C = features.size(1), H = features.size(2), W = features.size(3);
  const int64_t R = rois.size(0), P = output_size, G = sampling_ratio, S = P * G;
  if (R == 0) return torch::zeros({0, C, P, P}, features.options());

  // Coordinates in float (double for double features): reduced precision
  // would misplace sampling points by whole pixels on large images.
  const auto coordinate_type = features.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const auto r = rois.detach().to(coordinate_type);
  const auto batch_index = r.select(1, 0).to(torch::kInt64);
  // Sampling coordinates: bin p, point g sits at start + (p + (g + 0.5) / G) · bin.
  const auto offsets = ((torch::arange(S, r.options()) + 0.5) / G).unsqueeze(0);  // [1, S] in bins
  const auto coords = [&](int lo, int hi) {
    const auto start = r.select(1, lo) * spatial_scale;
    const auto extent = (r.select(1, hi) * spatial_scale - start).clamp_min(1.0);  // at least one pixel
    return start.unsqueeze(1) + offsets * (extent / P).unsqueeze(1);
  };
  const AxisTaps ys = axis_taps(coords(2, 4), H), xs = axis_taps(coords(1, 3), W);

  // Rows of a channels-last view, [N·H·W, C]; a point (b, y, x) is row (b·H + y)·W + x.
  const auto table = features.permute({0, 2, 3, 1}).reshape({-1, C});
  const auto row_base = (batch_index * H).view({R, 1, 1});
  torch::Tensor sum;
  for (const auto& [y, wy] : {std::pair{ys.low, ys.low_weight}, std::pair{ys.high, ys.high_weight}}) {
    for (const auto& [x, wx] : {std::pair{xs.low, xs.low_weight}, std::pair{xs.high, xs.high_weight}}) {
      const auto index = ((row_base + y.unsqueeze(2)) * W + x.unsqueeze(1)).reshape({-1});  // [R·S·S]
      const auto weight = (wy.unsqueeze(2) * wx.unsqueeze(1)).reshape({-1, 1}).to(features.scalar_type());
      const auto term = table.index_select(0, index) * weight;
      sum = sum.defined() ? sum + term : term;
    }
  }
  // [R, P, G, P, G, C] → average each bin's G×G points → [R, C, P, P].
  return sum.view({R, P, G, P, G, C}).mean({2, 4}).permute({0, 3, 1, 2}).contiguous();
}

}  // namespace tbd::nn
