// What nine of the eleven workloads are: one model, one optimizer and one
// source of batches. A workload derived from Recipe builds them in setup()
// (place() puts the model on the device in training mode) and writes its
// loss; the training step around it (phases, backward, clipping, optimizer),
// handing out batches and exposing weights and optimizer state are done here
// once. wgan (two models) and a3c (worker threads) implement Workload
// directly.
#pragma once

#include <map>
#include <memory>
#include <string>
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
  int64_t distinct_batch_shapes() const override { return batches_.distinct_shapes(); }
  ParameterSet state() const override { return ParameterSet::of(*model_, optimizer_.get()); }
  std::vector<torch::optim::Optimizer*> optimizers() override { return {optimizer_.get()}; }
  // The model's parameters by their names (also for comparing one placement
  // of a model with another: tests/embedding_sharding_test.cpp).
  std::map<std::string, torch::Tensor> named_weights() const override {
    std::map<std::string, torch::Tensor> out;
    for (const auto& p : model_->named_parameters()) out[p.key()] = p.value().detach();
    return out;
  }
  // The model's wrapping units, where its forward declares them.
  std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const override {
    if constexpr (requires { model_->shard_units(); })
      return model_->shard_units();
    else
      return {};
  }

  // One training iteration: for each micro-batch the forward pass and loss
  // inside the forward phase, then backward; then the optimizer step (after
  // clipping the gradients' global norm to max_gradient_norm_ when that is
  // > 0). With N micro-batches (--grad-accum N) each loss is divided by N
  // before its backward, so the gradients that add up in .grad are those of
  // the mean loss over all N micro-batches, as one batch N times larger would
  // give (exactly so for models without batch statistics: batch norm
  // normalises each micro-batch by its own, as in PyTorch).
  StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) override {
    const auto n = static_cast<int64_t>(micro_batches.size());
    // Declared outside the loop, as a PyTorch loop's variables are: one
    // micro-batch's outputs live until the next forward has made its own.
    LossAndOutputs pass;
    torch::Tensor loss_sum;
    for (int64_t i = 0; i < n; ++i) {
      torch::Tensor loss;
      {
        auto forward = phases.forward();
        pass = compute_loss(micro_batches[i]);
        loss = n == 1 ? pass.loss : pass.loss / static_cast<double>(n);
      }
      phases.backward(loss, /*completes_step=*/i + 1 == n);
      loss_sum = i == 0 ? loss.detach() : loss_sum + loss.detach();
    }
    if (max_gradient_norm_ > 0)
      clipped_optimizer_step(phases, *optimizer_, model_->parameters(), max_gradient_norm_);
    else
      phases.optimizer_step(*optimizer_);
    return {loss_sum};
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
