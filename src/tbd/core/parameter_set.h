// The tensors a training run keeps between iterations.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace tbd {

// An optimizer that keeps state tensors beyond LibTorch's per-parameter
// state (tbd's fused Adam keeps its float step counters): ParameterSet counts
// them as optimizer state too.
class ExtraOptimizerState {
 public:
  virtual ~ExtraOptimizerState() = default;
  virtual std::vector<torch::Tensor> extra_state() const = 0;
};

struct ParameterSet {
  std::vector<torch::Tensor> weights;          // every parameter, trainable or frozen
  std::vector<torch::Tensor> buffers;          // e.g. batch-norm running statistics
  std::vector<torch::Tensor> optimizer_state;  // momentum, Adam moments, ...

  int64_t parameter_count() const;            // Σ numel(weights)
  int64_t trainable_parameter_count() const;  // Σ numel(weights requiring grad)

  // Adds a module's parameters and buffers, or an optimizer's state.
  void add(const torch::nn::Module& module);
  void add(const torch::optim::Optimizer& optimizer);

  // The state of a one-model, one-optimizer workload (optimizer may be null
  // before set-up has made it).
  static ParameterSet of(const torch::nn::Module& model, const torch::optim::Optimizer* optimizer);
};

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace tbd
