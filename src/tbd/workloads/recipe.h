// What nine of the eleven workloads are: one model, one optimizer and one
// source of batches. A workload derived from Recipe builds them in setup()
// (place() puts the model on the device in training mode) and writes its
// loss; the training step around it (phases, backward, clipping, optimizer),
// handing out batches and exposing weights and optimizer state are done here
// once. wgan (two models) and a3c (worker threads) implement Workload
// directly.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "tbd/core/workload.h"
#include "tbd/data/batch_source.h"
#include "tbd/optim/clipped_step.h"

namespace tbd {

// What a recipe's forward pass gives the step: the loss, and the model's
// outputs, which the step keeps alive until it ends, as the local variables
// of a PyTorch training loop keep them through backward and the optimizer
// step (so the memory figures are that loop's: an LM's logits are 14% of
// gpt's peak).
struct LossAndOutputs {
  torch::Tensor loss;
  std::vector<torch::Tensor> outputs;
};

template <class Model>
class Recipe : public Workload {
 public:
  Batch next_batch() override { return batches_.next(); }
  ParameterSet state() const override { return ParameterSet::of(*model_, optimizer_.get()); }

  // One training iteration: the forward pass and loss inside the forward
  // phase, backward, then the optimizer step (after clipping the gradients'
  // global norm to max_gradient_norm_ when that is > 0).
  StepOutput step(const Batch& batch, Phases& phases) override {
    LossAndOutputs pass;
    {
      auto forward = phases.forward();
      pass = compute_loss(batch);
    }
    const torch::Tensor& loss = pass.loss;
    phases.backward(loss);
    if (max_gradient_norm_ > 0)
      clipped_optimizer_step(phases, *optimizer_, model_->parameters(), max_gradient_norm_);
    else
      phases.optimizer_step(*optimizer_);
    return {loss.detach()};
  }

 protected:
  // The forward pass and the training loss (a scalar) of one batch.
  virtual LossAndOutputs compute_loss(const Batch& batch) = 0;

  // The model, on `device`, in training mode.
  void place(Model model, torch::Device device) {
    model_ = std::move(model);
    model_->to(device);
    model_->train();
  }

  torch::Device device_{torch::kCPU};
  Model model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  double max_gradient_norm_ = 0;  // > 0: clip the gradients' global norm to this before each step
  BatchSource batches_;
};

}  // namespace tbd
