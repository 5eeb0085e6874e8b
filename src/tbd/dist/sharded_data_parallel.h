// Sharded data parallelism on c10d: ZeRO stages 1 and 2 (Rajbhandari et
// al. 2020; stage 2 is FSDP's SHARD_GRAD_OP). Every rank keeps the whole
// parameters (for its forward and backward) but the optimizer holds only
// this rank's shard of them, so its state (momentum, Adam's moments) is
// made for the shard alone: 1/N of it per rank.
//
// The shards follow shard_layout.h: each gradient bucket is one flat,
// padded run of elements split into N equal slices. As backward produces
// a parameter's gradient (a post-accumulate-grad hook: after autograd has
// added it into .grad), it is copied into its bucket's flat gradient and
// .grad is freed; when a bucket is complete its collective starts while
// backward goes on (with overlap on; off: after backward):
//  - optimizer (ZeRO-1): an all-reduce of the bucket, as DDP does; every
//    rank then holds the whole averaged gradient and steps its slice;
//  - gradients (ZeRO-2): a reduce-scatter, after which the rank holds only
//    its slice of the summed gradient (1/N of the gradient memory).
// The optimizer's parameter groups are rewritten to this rank's pieces
// (flat views into the parameters' own memory, so a step updates the
// parameters in place); after each step the slices are all-gathered back
// into every rank's whole parameters. Gradient clipping uses the norm over
// every rank's slices (one all-reduce of a scalar).
//
// With gradient accumulation only the last micro-batch's backward reduces
// (as DDP's no_sync): the earlier ones add up in .grad as usual.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/core/phases.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/shard_layout.h"

namespace tbd {

class ShardedDataParallel final : public GradientSync {
 public:
  // `optimizers`: every optimizer that steps `parameters` (each trainable
  // parameter in at most one group), before their first step. `stage`:
  // optimizer or gradients. Throws UsageError for what cannot be sharded.
  ShardedDataParallel(std::vector<torch::Tensor> parameters, std::vector<torch::optim::Optimizer*> optimizers,
                      ProcessGroup& group, int64_t bucket_bytes, bool overlap, Sharding stage);
  ~ShardedDataParallel() override;

  void expect_backward(bool completes_step) override;
  void synchronize() override;
  bool shards_optimizer() const override { return true; }
  double clip_global_norm(double max_norm) override;
  void after_optimizer_step() override;

  // The gradient memory this rank holds between backward and the optimizer
  // step (the memory probe marks it as weight gradients).
  std::vector<torch::Tensor> gradient_buffers() const;
  // The result's `sharding` section: the strategy, the layout, the model
  // state bytes this rank holds next to the ZeRO formula's
  // (docs/distributed.md#sharding).
  nlohmann::json describe(const std::vector<torch::Tensor>& optimizer_state) const;

 private:
  struct Bucket {
    ShardedBucket layout;
    torch::Tensor flat;   // the bucket's gradients, padded; from the first gradient until the step
    torch::Tensor slice;  // this rank's averaged slice (a view of flat, or the reduce-scatter's output)
    int ready = 0;
    bool launched = false;
    std::shared_ptr<PendingReduce> pending;
  };
  struct Piece {
    size_t bucket = 0;
    ShardPiece layout;
    torch::Tensor tensor;  // what the optimizer steps: a flat view of the parameter
  };

  void on_gradient_ready(size_t param);
  // Copies .grad of parameter k into its bucket (made on first use) and frees .grad.
  void take_gradient(size_t k);
  void launch(Bucket& b);

  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> flat_params_;  // each parameter's elements in memory order (a 1-D view)
  std::vector<size_t> bucket_of_;
  std::vector<int64_t> offset_of_;  // in its bucket
  std::vector<Bucket> buckets_;
  std::vector<Piece> pieces_;
  std::vector<const torch::optim::Optimizer*> optimizers_;
  ProcessGroup& group_;
  bool overlap_;
  Sharding stage_;
  bool reducing_ = true;  // the backward now running completes the step
  bool hooked_ = false;
  std::mutex mutex_;  // hooks may run on autograd's device threads
};

}  // namespace tbd
