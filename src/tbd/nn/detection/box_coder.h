// Box regression targets as Faster R-CNN defines them (torchvision's
// BoxCoder): a box is encoded relative to a reference box as
// (wx·dx/w, wy·dy/h, ww·log(w'/w), wh·log(h'/h)) of the centre shift and
// the size ratio. The RPN uses weights (1, 1, 1, 1), the box head (10, 10, 5, 5).
#pragma once

#include <array>
#include <cmath>

#include <torch/types.h>

namespace tbd::nn {

class BoxCoder {
 public:
  explicit BoxCoder(std::array<double, 4> weights, double scale_clamp = std::log(1000.0 / 16));

  // Codes [N, 4] of `boxes` [N, 4] relative to `references` [N, 4].
  torch::Tensor encode(const torch::Tensor& boxes, const torch::Tensor& references) const;
  // Boxes [N, K·4] from codes [N, K·4] relative to `references` [N, 4]
  // (K boxes per reference, e.g. one per class).
  torch::Tensor decode(const torch::Tensor& codes, const torch::Tensor& references) const;

 private:
  std::array<double, 4> weights_;
  double scale_clamp_;  // keeps exp() of a predicted log-size ratio finite
};

}  // namespace tbd::nn
