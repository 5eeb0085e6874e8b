// Synthetic data: a few distinct batches of the real shapes and
// distributions, made once at set-up and resident on the device, handed out
// in turn. No input pipeline cost enters the measurement (docs/metrics.md).
#pragma once

#include <vector>

#include "tbd/core/workload.h"

namespace tbd {

class BatchPool {
 public:
  BatchPool() = default;
  explicit BatchPool(std::vector<Batch> batches) : batches_(std::move(batches)) {}
  bool empty() const { return batches_.empty(); }
  const Batch& next() {
    const Batch& b = batches_[next_];
    next_ = (next_ + 1) % batches_.size();
    return b;
  }

 private:
  std::vector<Batch> batches_;
  size_t next_ = 0;
};

// Moves CPU tensors to the device; pinned and asynchronous towards CUDA.
torch::Tensor to_device(const torch::Tensor& t, c10::Device device);

}  // namespace tbd
