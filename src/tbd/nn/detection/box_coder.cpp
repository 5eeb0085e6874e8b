#include "tbd/nn/detection/box_coder.h"

namespace tbd::nn {

namespace {
struct Centred {
  torch::Tensor cx, cy, w, h;  // [N, 1] each
};
Centred centred(const torch::Tensor& boxes) {
  auto w = boxes.slice(1, 2, 3) - boxes.slice(1, 0, 1);
  auto h = boxes.slice(1, 3, 4) - boxes.slice(1, 1, 2);
  return {boxes.slice(1, 0, 1) + 0.5 * w, boxes.slice(1, 1, 2) + 0.5 * h, w, h};
}
}  // namespace

BoxCoder::BoxCoder(std::array<double, 4> weights, double scale_clamp) : weights_(weights), scale_clamp_(scale_clamp) {}

torch::Tensor BoxCoder::encode(const torch::Tensor& boxes, const torch::Tensor& references) const {
  const Centred r = centred(references), b = centred(boxes);
  return torch::cat({weights_[0] * (b.cx - r.cx) / r.w, weights_[1] * (b.cy - r.cy) / r.h,
                     weights_[2] * torch::log(b.w / r.w), weights_[3] * torch::log(b.h / r.h)},
                    1);
}

torch::Tensor BoxCoder::decode(const torch::Tensor& codes, const torch::Tensor& references) const {
  const Centred r = centred(references.to(codes.scalar_type()));
  const auto dx = codes.slice(1, 0, codes.size(1), 4) / weights_[0];
  const auto dy = codes.slice(1, 1, codes.size(1), 4) / weights_[1];
  const auto dw = (codes.slice(1, 2, codes.size(1), 4) / weights_[2]).clamp_max(scale_clamp_);
  const auto dh = (codes.slice(1, 3, codes.size(1), 4) / weights_[3]).clamp_max(scale_clamp_);
  const auto cx = dx * r.w + r.cx, cy = dy * r.h + r.cy;
  const auto w = torch::exp(dw) * r.w, h = torch::exp(dh) * r.h;
  // [N, K, 4] interleaved back to [N, K·4].
  return torch::stack({cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h}, 2).flatten(1);
}

}  // namespace tbd::nn
