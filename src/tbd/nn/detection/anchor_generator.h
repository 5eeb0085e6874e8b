// Anchors as torchvision's AnchorGenerator makes them: per feature level,
// one zero-centred base anchor per (size, aspect ratio) with
// aspect = height / width and area = size², rounded to whole pixels, then
// shifted to every cell of the level's grid (stride = padded image size ÷
// grid size). Order: cell-major (row, column), then the base anchors.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace tbd::nn {

class AnchorGenerator {
 public:
  // sizes[l]: anchor sizes of level l; the same aspect ratios at every level.
  AnchorGenerator(std::vector<std::vector<double>> sizes, std::vector<double> aspect_ratios);

  int64_t anchors_per_location(size_t level) const;
  size_t levels() const { return sizes_.size(); }

  // Base anchors of one level, [sizes·ratios, 4].
  torch::Tensor base_anchors(size_t level, const torch::TensorOptions& options) const;

  // Anchors of all levels concatenated, [Σ H_l·W_l·A_l, 4], for an image batch
  // padded to image_height × image_width whose features have the given grids.
  torch::Tensor generate(int64_t image_height, int64_t image_width,
                         const std::vector<std::pair<int64_t, int64_t>>& grids,
                         const torch::TensorOptions& options) const;

 private:
  std::vector<std::vector<double>> sizes_;
  std::vector<double> aspect_ratios_;
};

}  // namespace tbd::nn
