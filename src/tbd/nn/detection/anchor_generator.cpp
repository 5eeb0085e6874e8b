#include "tbd/nn/detection/anchor_generator.h"

#include <stdexcept>

namespace tbd::nn {

AnchorGenerator::AnchorGenerator(std::vector<std::vector<double>> sizes, std::vector<double> aspect_ratios)
    : sizes_(std::move(sizes)), aspect_ratios_(std::move(aspect_ratios)) {}

int64_t AnchorGenerator::anchors_per_location(size_t level) const {
  return static_cast<int64_t>(sizes_.at(level).size() * aspect_ratios_.size());
}

torch::Tensor AnchorGenerator::base_anchors(size_t level, const torch::TensorOptions& options) const {
  const auto scales = torch::tensor(sizes_.at(level), torch::kFloat);
  const auto h_ratios = torch::sqrt(torch::tensor(aspect_ratios_, torch::kFloat));
  const auto w_ratios = 1 / h_ratios;
  const auto ws = (w_ratios.unsqueeze(1) * scales.unsqueeze(0)).reshape({-1});
  const auto hs = (h_ratios.unsqueeze(1) * scales.unsqueeze(0)).reshape({-1});
  return (torch::stack({-ws, -hs, ws, hs}, 1) / 2).round().to(options);
}

torch::Tensor AnchorGenerator::generate(int64_t image_height, int64_t image_width,
                                        const std::vector<std::pair<int64_t, int64_t>>& grids,
                                        const torch::TensorOptions& options) const {
  if (grids.size() != sizes_.size())
    throw std::invalid_argument("AnchorGenerator: " + std::to_string(grids.size()) + " feature levels, but sizes for " +
                                std::to_string(sizes_.size()));
  std::vector<torch::Tensor> all;
  for (size_t l = 0; l < grids.size(); ++l) {
    const auto [gh, gw] = grids[l];
    const int64_t stride_y = image_height / gh, stride_x = image_width / gw;
    const auto shifts_x = torch::arange(gw, options) * stride_x;
    const auto shifts_y = torch::arange(gh, options) * stride_y;
    const auto mesh = torch::meshgrid({shifts_y, shifts_x}, "ij");
    const auto sx = mesh[1].reshape({-1}), sy = mesh[0].reshape({-1});
    const auto shifts = torch::stack({sx, sy, sx, sy}, 1);
    all.push_back((shifts.view({-1, 1, 4}) + base_anchors(l, options).view({1, -1, 4})).reshape({-1, 4}));
  }
  return torch::cat(all);
}

}  // namespace tbd::nn
