// Sinusoidal position encodings (Vaswani et al. 2017, section 3.5):
// PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)).
// A buffer, not a parameter: nothing here is learned.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

torch::Tensor sinusoidal_positions(int64_t max_length, int64_t d_model);  // [max_length, d]

class SinusoidalPositionsImpl : public torch::nn::Module {
 public:
  SinusoidalPositionsImpl(int64_t max_length, int64_t d_model);
  // x [B, T, d] → x + PE[0:T]; throws Error when T exceeds max_length.
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor table_;
};
TORCH_MODULE(SinusoidalPositions);

}  // namespace tbd::nn
