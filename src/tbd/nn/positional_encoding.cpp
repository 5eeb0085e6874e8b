#include "tbd/nn/positional_encoding.h"

#include <torch/torch.h>

#include <cmath>

#include "tbd/core/error.h"

namespace tbd::nn {

torch::Tensor sinusoidal_positions(int64_t max_length, int64_t d_model) {
  auto position = torch::arange(max_length, torch::kFloat64).unsqueeze(1);
  auto even = torch::arange(0, d_model, 2, torch::kFloat64);
  auto angle = position * torch::exp(even * (-std::log(10000.0) / static_cast<double>(d_model)));
  auto table = torch::zeros({max_length, d_model}, torch::kFloat64);
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)}, torch::sin(angle));
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                   torch::cos(angle).narrow(1, 0, d_model / 2));
  return table.to(torch::kFloat32);
}

SinusoidalPositionsImpl::SinusoidalPositionsImpl(int64_t max_length, int64_t d_model) {
  table_ = register_buffer("table", sinusoidal_positions(max_length, d_model));
}

torch::Tensor SinusoidalPositionsImpl::forward(const torch::Tensor& x) {
  if (x.size(1) > table_.size(0))
    throw Error("sequence of " + std::to_string(x.size(1)) + " positions exceeds the position table of " +
                std::to_string(table_.size(0)));
  return x + table_.narrow(0, 0, x.size(1)).to(x.dtype());
}

}  // namespace tbd::nn
