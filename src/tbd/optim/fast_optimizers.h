// The optimizer step a performance-aware PyTorch user gets: ATen's fused
// kernels (`_fused_sgd_`, `_fused_adam_`, `_fused_adamw_`, one kernel over
// every parameter, as torch.optim's fused=True) or its multi-tensor
// `_foreach_*` ops (torch.optim's foreach=True), instead of LibTorch's C++
// optimizers, which loop parameter by parameter with several ops each.
//
// Each class derives from the LibTorch optimizer it replaces and keeps its
// options, parameter groups and per-parameter state (so the memory probe's
// optimizer_state, learning-rate schedules and serialisation are unchanged);
// only step() differs. Semantics are torch.optim's (and LibTorch's):
// tests/fast_optimizers_test.cpp checks the weights after several steps
// against LibTorch's reference optimizers. docs/workloads.md#optimizers.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "tbd/core/options.h"
#include "tbd/core/parameter_set.h"

namespace tbd {

// What every Fast* optimizer is as well: a step over all parameters at once,
// so the clipping before it (clipped_optimizer_step) is multi-tensor too.
class MultiTensorStep {
 public:
  virtual ~MultiTensorStep() = default;
};

// Sparse gradients (dlrm's embedding bags) take LibTorch's own per-parameter
// step (the fused and foreach kernels are dense only); the dense parameters
// of the same group still take the multi-tensor kernels.
class FastSGD final : public torch::optim::SGD, public MultiTensorStep {
 public:
  FastSGD(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::SGDOptions defaults,
          OptimizerImpl impl);
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  OptimizerImpl impl_;
};

// Adam (L2 weight decay added to the gradient) or AdamW (decoupled weight
// decay), by `decoupled`.
template <class Base, class Options>
class FastAdamBase final : public Base, public MultiTensorStep, public ExtraOptimizerState {
 public:
  FastAdamBase(const std::vector<torch::optim::OptimizerParamGroup>& groups, Options defaults, OptimizerImpl impl);
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  // The fused kernels' float step counters, one per parameter, kept and
  // advanced together as torch.optim keeps `state_steps` (not remade each step).
  std::vector<torch::Tensor> extra_state() const override;

 private:
  OptimizerImpl impl_;
  std::unordered_map<const c10::TensorImpl*, torch::Tensor> step_tensors_;
};
using FastAdam = FastAdamBase<torch::optim::Adam, torch::optim::AdamOptions>;
using FastAdamW = FastAdamBase<torch::optim::AdamW, torch::optim::AdamWOptions>;

class FastRMSprop final : public torch::optim::RMSprop, public MultiTensorStep {
 public:
  FastRMSprop(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::RMSpropOptions defaults,
              OptimizerImpl impl);
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  OptimizerImpl impl_;
};

// Adagrad as torch.optim's: sparse gradients (embedding tables) update only
// their rows (its `_make_sparse` path: the squares of the coalesced rows
// added to the sum, the rows divided by the sum's square root); the dense
// parameters take `_fused_adagrad_` or the `_foreach_*` ops. MLPerf's DLRMv2
// trains its tables and MLPs with it.
class FastAdagrad final : public torch::optim::Adagrad, public MultiTensorStep, public ExtraOptimizerState {
 public:
  FastAdagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::AdagradOptions defaults,
              OptimizerImpl impl);
  torch::Tensor step(LossClosure closure = nullptr) override;
  std::vector<torch::Tensor> extra_state() const override;  // the fused kernel's float step counters

 private:
  OptimizerImpl impl_;
  std::unordered_map<const c10::TensorImpl*, torch::Tensor> step_tensors_;
};

// The optimizer for `impl`: LibTorch's own for loop, a Fast* otherwise.
std::unique_ptr<torch::optim::SGD> make_sgd(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                            torch::optim::SGDOptions defaults, OptimizerImpl impl);
std::unique_ptr<torch::optim::Adam> make_adam(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                              torch::optim::AdamOptions defaults, OptimizerImpl impl);
std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                torch::optim::AdamWOptions defaults, OptimizerImpl impl);
std::unique_ptr<torch::optim::RMSprop> make_rmsprop(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                    torch::optim::RMSpropOptions defaults, OptimizerImpl impl);
std::unique_ptr<torch::optim::Adagrad> make_adagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                    torch::optim::AdagradOptions defaults, OptimizerImpl impl);

// The same for one group of parameters.
std::unique_ptr<torch::optim::SGD> make_sgd(std::vector<torch::Tensor> params, torch::optim::SGDOptions defaults,
                                            OptimizerImpl impl);
std::unique_ptr<torch::optim::Adam> make_adam(std::vector<torch::Tensor> params, torch::optim::AdamOptions defaults,
                                              OptimizerImpl impl);
std::unique_ptr<torch::optim::RMSprop> make_rmsprop(std::vector<torch::Tensor> params,
                                                    torch::optim::RMSpropOptions defaults, OptimizerImpl impl);

// The global L2 norm of the gradients and, above max_norm, their scaling to
// it (torch.nn.utils.clip_grad_norm_): one _foreach_norm and one
// _foreach_mul_ instead of a norm and a multiply per parameter. Returns the
// norm before clipping.
torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace tbd
