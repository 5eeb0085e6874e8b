// RoIAlign (He et al. 2017) with torchvision's semantics (aligned=false):
// each region of interest is divided into output_size × output_size bins;
// each bin averages sampling_ratio² bilinearly interpolated points spaced
// evenly inside it. Points more than one pixel outside the map read zero.
//
// Written with differentiable tensor operations (gathers of the four
// bilinear neighbours of every sampling point, weighted and summed), so
// autograd provides the backward pass: the gradient of a feature value is the
// sum of the bilinear weights with which it entered the outputs.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace tbd::nn {

// features [N, C, H, W]; rois [R, 5] = (image index, x1, y1, x2, y2) in image
// pixels; spatial_scale maps image pixels onto the feature map (1/stride).
// Returns [R, C, output_size, output_size].
torch::Tensor roi_align(const torch::Tensor& features, const torch::Tensor& rois, double spatial_scale,
                        int64_t output_size, int64_t sampling_ratio);

}  // namespace tbd::nn
