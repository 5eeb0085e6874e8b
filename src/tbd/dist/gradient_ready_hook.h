// Calls back when backward has added a parameter's gradient into .grad:
// autograd's post-accumulate-grad hook, which the outer backward's
// AccumulateGrad runs once per parameter and backward. A tensor hook
// (Tensor::register_hook) would not do: it also runs inside every
// torch::autograd::grad that asks for the parameter's gradient, as
// activation checkpointing's re-run of a block does (nn/activation_checkpoint.cpp),
// so it would count that parameter's gradient twice.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace tbd {

class GradientReadyHook final : public torch::autograd::PostAccumulateGradHook {
 public:
  explicit GradientReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  void operator()(const torch::autograd::Variable&) override { ready_(); }

  // Sets `ready` as `param`'s hook (one per parameter: it replaces another's).
  static void attach(const torch::Tensor& param, std::function<void()> ready) {
    torch::autograd::impl::set_post_acc_grad_hooks(param, std::make_unique<GradientReadyHook>(std::move(ready)));
  }
  static void detach(const torch::Tensor& param) { torch::autograd::impl::post_acc_grad_hooks(param).reset(); }

 private:
  std::function<void()> ready_;
};

}  // namespace tbd
