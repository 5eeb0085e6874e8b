// Data-parallel gradient averaging in buckets, as PyTorch's DDP does it:
// parameters are grouped (in reverse order, roughly the order backward
// produces their gradients) into buckets of about `bucket_bytes`; with
// overlap on, a bucket's all-reduce starts as soon as its last gradient is
// ready, while backward goes on; synchronize() (when the backward phase
// ends) waits for all buckets and writes the averaged gradients back. With overlap
// off, everything is reduced after backward, for comparison.
//
// With gradient accumulation (--grad-accum N) only the last micro-batch's
// backward reduces, as DDP's no_sync() does for the others: the hooks of the
// earlier ones do nothing, and a bucket receives what .grad holds once the
// last backward has added its gradient (every micro-batch's sum), so one
// all-reduce per bucket serves the whole optimizer step.
//
// Sparse gradients (embedding tables with sparse gradients: dlrm) are
// all-reduced sparse, as DDP does on Gloo (an allgather of the looked-up
// rows, not the table), when backward ends, the tables of one row shape
// stacked into one collective (sparse_allreduce.h). Which parameters
// get sparse gradients shows in the first backward; that iteration reduces
// them densified in their buckets, and the buckets are then rebuilt without
// them (every rank sees the same layouts, so all rebuild alike). NCCL has no
// sparse all-reduce: there they stay densified in their buckets.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "tbd/core/phases.h"
#include "tbd/dist/process_group.h"

namespace tbd {

// What one synchronisation did, as events on the steady clock (seconds since
// its epoch); the comm probe turns them into busy, hidden and exposed time
// and bus bandwidth (docs/metrics.md#comm).
struct BucketAllreduce {
  int64_t bytes = 0;
  double launched_s = 0;                 // the all-reduce was started
  double done_s = 0;                     // the backend reported it complete
  std::optional<double> device_seconds;  // NCCL's own timing of the collective on the device
  bool sparse = false;                   // a sparse gradient's all-reduce (allgathers), not a bucket's
};
struct CommIteration {
  std::vector<BucketAllreduce> buckets;
  double backward_end_s = 0;  // synchronize() was called: backward's computation had ended
  double wait_end_s = 0;      // every bucket had completed
};

class GradientReducer final : public GradientSync {
 public:
  GradientReducer(std::vector<torch::Tensor> parameters, ProcessGroup& group, int64_t bucket_bytes, bool overlap);
  ~GradientReducer() override;

  void expect_backward(bool completes_step) override;
  void synchronize() override;

  // Iterations synchronised so far; the comm probe reads and clears them.
  std::vector<CommIteration> take_history();
  int bucket_count() const { return static_cast<int>(buckets_.size()); }
  bool overlap() const { return overlap_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Bucket {
    std::vector<size_t> members;  // indices into params_
    std::vector<int64_t> offsets;
    int64_t elements = 0;
    torch::Tensor flat;
    int ready = 0;
    bool launched = false;
    Clock::time_point launched_at;
    // Set by the backend's completion callback, which may run after wait()
    // returned, even after this bucket is gone (rebuilt without sparse
    // gradients, or the reducer destroyed): so the callback owns its cell,
    // a new one per launch.
    std::shared_ptr<std::atomic<Clock::rep>> done_at;
    std::shared_ptr<PendingReduce> pending;
  };

  static constexpr size_t kNoBucket = static_cast<size_t>(-1);
  void build_buckets(int64_t bucket_bytes);
  void on_gradient(size_t param);  // its gradient is in .grad (a post-accumulate-grad hook)
  void launch(Bucket& b);
  // Notes that parameter k's gradients are sparse (once, where the backend
  // sums sparse tensors): its bucket goes at the next rebuild.
  void learn_layout(size_t k, const torch::Tensor& grad);
  // All-reduces the sparse gradients and averages them (× scale), in place.
  void reduce_sparse(CommIteration& it, double scale);

  std::vector<torch::Tensor> params_;
  std::vector<size_t> bucket_of_;   // param -> bucket (kNoBucket: reduced sparse, on its own)
  std::vector<int64_t> offset_of_;  // param -> offset in its bucket
  std::vector<bool> has_grad_;
  std::vector<torch::Tensor> sparse_layout_;  // param -> an empty gradient of its sparse layout (undefined: dense)
  bool rebuild_ = false;                      // a sparse gradient was seen while it had a bucket
  int64_t bucket_bytes_;
  std::deque<Bucket> buckets_;  // deque: stable addresses for the callbacks
  bool hooked_ = false;
  ProcessGroup& group_;
  bool overlap_;
  bool reducing_ = true;  // the backward now running completes the step (expect_backward())
  std::mutex mutex_;      // hooks may run on autograd's device threads
  std::vector<CommIteration> history_;
};

}  // namespace tbd
