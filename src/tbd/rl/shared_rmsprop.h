// RMSprop with statistics shared by every A3C worker ("shared RMSProp",
// Mnih et al. 2016, section 4 and supplement 7): one running mean of squared
// gradients per parameter, updated in place and without locks by whichever
// worker steps, with that worker's own gradients.
//
// Why not torch::optim::RMSprop: it reads gradients from the parameters'
// .grad, which all threads would share (one worker would step with another's
// gradients), and it creates its state lazily inside step(), which is a race
// when eight threads take their first step together. Here the state exists
// from construction and each call brings its gradients.
#pragma once

#include <vector>

#include <torch/types.h>

namespace tbd::rl {

struct RMSpropConfig {
  double lr = 7e-4;
  double alpha = 0.99;  // decay of the mean of squared gradients
  double eps = 0.1;     // inside the square root, as the paper writes it
};

class SharedRMSprop {
 public:
  SharedRMSprop(std::vector<torch::Tensor> parameters, RMSpropConfig config);
  // g ← α·g + (1 − α)·Δθ²;  θ ← θ − lr · Δθ / √(g + ε). `gradients` match
  // `parameters` one to one (undefined: that parameter is skipped).
  void step(const std::vector<torch::Tensor>& gradients);
  const std::vector<torch::Tensor>& square_averages() const { return square_avg_; }
  const RMSpropConfig& config() const { return config_; }

 private:
  std::vector<torch::Tensor> parameters_, square_avg_;
  RMSpropConfig config_;
};

}  // namespace tbd::rl
