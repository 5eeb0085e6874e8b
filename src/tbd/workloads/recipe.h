// What nine of the eleven workloads are: one model, one optimizer and one
// source of batches. A workload derived from Recipe builds them in setup()
// (place() puts the model on the device in training mode) and writes its
// step; handing out batches and exposing weights and optimizer state is done
// here once. wgan (two models) and a3c (worker threads) implement Workload
// directly.
#pragma once

#include <memory>
#include <utility>

#include <torch/optim/optimizer.h>

#include "tbd/core/workload.h"
#include "tbd/data/batch_source.h"

namespace tbd {

template <class Model>
class Recipe : public Workload {
 public:
  Batch next_batch() override { return batches_.next(); }
  ParameterSet state() const override { return ParameterSet::of(*model_, optimizer_.get()); }

 protected:
  // The model, on `device`, in training mode.
  void place(Model model, torch::Device device) {
    model_ = std::move(model);
    model_->to(device);
    model_->train();
  }

  torch::Device device_{torch::kCPU};
  Model model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  BatchSource batches_;
};

}  // namespace tbd
