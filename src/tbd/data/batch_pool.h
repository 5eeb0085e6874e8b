// Synthetic data: a few distinct batches of the real shapes and
// distributions, made once at set-up and resident on the device, handed out
// in turn. No input pipeline cost enters the measurement (docs/metrics.md).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tbd/core/workload.h"

namespace tbd {

class BatchPool {
 public:
  BatchPool() = default;
  explicit BatchPool(std::vector<Batch> batches) : batches_(std::move(batches)) {}
  bool empty() const { return batches_.empty(); }
  // Distinct batch_shape()s among the batches (handed out in turn: a
  // warm-up of size() iterations runs every one).
  int64_t distinct_shapes() const {
    std::set<std::string> shapes;
    for (const auto& b : batches_) shapes.insert(batch_shape(b));
    return static_cast<int64_t>(shapes.size());
  }
  const Batch& next() {
    const Batch& b = batches_[next_];
    next_ = (next_ + 1) % batches_.size();
    return b;
  }

 private:
  std::vector<Batch> batches_;
  size_t next_ = 0;
};

// Distinct batches in a synthetic pool: consecutive iterations never see the
// same tensors, and the pool stays small enough to keep on the device.
constexpr int kSyntheticPoolBatches = 4;

// A pool of kSyntheticPoolBatches batches, each from one call of make_batch()
// (which draws from the workload's own seeded generator, so the same seed
// gives the same pool).
template <class MakeBatch>
BatchPool synthetic_pool(MakeBatch make_batch) {
  std::vector<Batch> batches;
  for (int i = 0; i < kSyntheticPoolBatches; ++i) batches.push_back(make_batch());
  return BatchPool(std::move(batches));
}

// Moves CPU tensors to the device; pinned and asynchronous towards CUDA.
torch::Tensor to_device(const torch::Tensor& t, c10::Device device);

}  // namespace tbd
