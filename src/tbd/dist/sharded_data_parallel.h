// Sharded data parallelism on c10d: ZeRO stages 1 to 3 (Rajbhandari et
// al. 2020; stage 2 is FSDP's SHARD_GRAD_OP, stage 3 its FULL_SHARD).
// With optimizer and gradients every rank keeps the whole parameters (for
// its forward and backward) but the optimizer holds only this rank's shard
// of them, so its state (momentum, Adam's moments) is made for the shard
// alone: 1/N of it per rank.
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
// full (ZeRO-3) also shards the parameters of the workload's wrapping
// units (nn/shard_unit.h): each unit is one bucket whose parameters are
// views of one flat buffer; between uses the buffer's memory is freed and
// the rank keeps only its slice (what the optimizer steps, in place). The
// buffer is all-gathered just before the unit's forward (the next unit's
// gather is started as the current one computes), freed after it,
// gathered again when the gradient of the unit's output arrives (the unit
// before it in forward order is then prefetched) and freed once every
// parameter of the unit has its gradient, whose bucket is reduce-scattered
// at that moment. Parameters outside every unit (embeddings, heads, final
// norms: the root, as FSDP calls it) stay whole, as with gradients.
//
// Mixed precision (FSDP's MixedPrecision with param_dtype the run's
// precision, reduce_dtype fp32): under --precision bf16 full gathers the
// units' linear and convolution weights and biases in bf16 (a second flat
// buffer per unit; the norms' parameters, which autocast keeps fp32, are
// gathered fp32), so the all-gathers carry half the bytes, the gathered
// copies take half the memory, and autocast has nothing left to cast. The
// rank keeps its shard in fp32 (the master weights the optimizer steps);
// a bf16 gradient is added into its bucket's fp32 flat as soon as backward
// gives it (micro-batches accumulate in fp32) and reduce-scattered in fp32.
// Autocast would have cast those parameters to bf16 at every use, and a
// cast's backward returns its bf16 gradient widened to fp32, so the step
// computes what the replicated bf16 run computes.
//
// With gradient accumulation only the last micro-batch's backward reduces
// (as DDP's no_sync): the earlier ones add up in .grad as usual.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/core/phases.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/shard_layout.h"
#include "tbd/nn/shard_unit.h"

namespace tbd {

class ShardedDataParallel final : public GradientSync, public nn::UnitSharder {
 public:
  // `optimizers`: every optimizer that steps `parameters` (each trainable
  // parameter in at most one group), before their first step. `units`: the
  // workload's wrapping units (Workload::shard_units), used by full only.
  // `run_precision`: autocast's type (Float without autocast), in which
  // full gathers what autocast casts. Throws UsageError for what cannot be
  // sharded.
  ShardedDataParallel(std::vector<torch::Tensor> parameters, std::vector<torch::optim::Optimizer*> optimizers,
                      std::vector<std::shared_ptr<torch::nn::Module>> units, ProcessGroup& group, int64_t bucket_bytes,
                      bool overlap, Sharding stage, c10::ScalarType run_precision = c10::ScalarType::Float);
  ~ShardedDataParallel() override;

  void expect_backward(bool completes_step) override;
  void synchronize() override;
  bool shards_optimizer() const override { return true; }
  double clip_global_norm(double max_norm) override;
  void after_optimizer_step() override;

  // nn::UnitSharder (full only).
  bool holds(const torch::nn::Module& unit) const override;
  void before_forward(const torch::nn::Module& unit) override;
  torch::Tensor after_forward(const torch::nn::Module& unit, const torch::Tensor& output) override;

  // Gathers every unit's parameters back whole for good, so what reads the
  // weights after training (a comparison, a checkpoint) sees them; a
  // collective: every rank calls it, after its last step. No-op unless full.
  void unshard();

  // One collective of the sharded path, for the comm probe
  // (docs/metrics.md#comm). Times are seconds on the steady clock.
  struct Collective {
    std::string kind;   // "all-gather", "reduce-scatter" or "all-reduce"
    int64_t bytes = 0;  // nccl-tests' size: the whole buffer (all-gather's output, reduce-scatter's input)
    double launched_s = 0;
    // When it completed: the backend's callback, or the first moment tbd saw
    // it done (Gloo's all-gathers: an upper bound); < 0: not seen.
    std::atomic<double> done_s{-1};
    std::optional<double> device_seconds;  // its own duration where the backend times it (NCCL), after its wait
    // Weak: a record must not keep the collective's buffers alive.
    std::weak_ptr<PendingReduce> pending;
  };
  struct CommHistory {
    std::vector<std::shared_ptr<Collective>> collectives;
    double blocked_s = 0;  // time the step spent waiting for them (the exposed communication)
  };
  // Records the collectives from now on (the comm probe; off by default, so
  // a run without it keeps no history).
  void record_history();
  // The collectives and waits since the last call (the comm probe takes
  // them at the end of each iteration).
  CommHistory take_history();

  // The gradient memory this rank holds between backward and the optimizer
  // step (the memory probe marks it as weight gradients).
  std::vector<torch::Tensor> gradient_buffers() const;
  // What this rank keeps of the units' parameters between uses (full), and
  // the gathered buffers alive now (the memory probe marks both weights).
  std::vector<torch::Tensor> parameter_shards() const;
  std::vector<torch::Tensor> gathered_parameters() const;
  // Called with each unit's buffer as its gather allocates it (the memory
  // probe marks it); empty: none.
  void set_gather_observer(std::function<void(const torch::Tensor&)> observer);
  // The result's `sharding` section: the strategy, the layout, the model
  // state bytes this rank holds next to the ZeRO formula's
  // (docs/distributed.md#sharding).
  nlohmann::json describe(const std::vector<torch::Tensor>& optimizer_state) const;

 private:
  struct Bucket {
    ShardedBucket layout;
    torch::Tensor flat;   // the bucket's gradients, padded, fp32; from the first gradient until the step
    torch::Tensor slice;  // this rank's averaged slice (a view of flat, or the reduce-scatter's output)
    int ready = 0;
    bool launched = false;
    std::shared_ptr<PendingReduce> pending;
    int unit = -1;  // full: the wrapping unit whose parameters this bucket holds; -1: whole parameters
    // A unit's bucket (full): its parameters are views of `whole` (padded,
    // in the gathered precision; its memory freed while sharded); `shard`
    // is this rank's slice in fp32, kept between uses, what the optimizer
    // steps; `sent` its cast to the gathered precision while an all-gather
    // into whole (`gathering`) is in flight.
    torch::Tensor whole, shard, sent;
    std::shared_ptr<PendingReduce> gathering;
  };
  // A wrapping unit of full: one bucket, or two under mixed precision (what
  // autocast casts, gathered in the run's precision; the rest fp32).
  struct Unit {
    std::vector<size_t> buckets;
    size_t parameters = 0;
    bool gathered = false;
    size_t gradients_ready = 0;  // parameters whose gradient this backward has produced
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
  // Waits for bucket b's reduce-scatter and frees its whole flat (and the
  // collective's hold on it).
  void finish_reduce_scatter(Bucket& b);
  // Launches a collective through `start` (given the completion callback)
  // and records it; wait() waits for one, counting the time as blocked.
  std::shared_ptr<PendingReduce> record(
      const char* kind, int64_t bytes,
      const std::function<std::shared_ptr<PendingReduce>(std::function<void()>)>& start);
  void wait(PendingReduce& pending);
  // Stamps the collectives seen completed now (those without a completion callback).
  void notice_completions();
  // full: starts the all-gather of unit u's parameters (no-op if whole or under way);
  // waits until they are whole; frees their memory.
  void gather(size_t u);
  void wait_gathered(size_t u);
  void finish_gathers(Unit& unit);         // waits for the unit's all-gathers in flight
  bool gathering(const Unit& unit) const;  // an all-gather of the unit is in flight
  void release(size_t u);
  // The gradient of unit u's output has arrived: u must be whole.
  void before_backward(size_t u);
  // The unit after (+1) or before (-1) u in the last forward's order, or -1.
  int neighbour_in_forward(size_t u, int step) const;
  void set_up_units(const std::vector<std::shared_ptr<torch::nn::Module>>& units, int64_t bucket_bytes,
                    const std::vector<GradientShape>& shapes);
  // Buckets for parameters `members` (indices into params_): by bytes for
  // whole parameters (unit -1), one for a unit, whose parameters become
  // views of its flat buffer and whose shard the optimizer will step.
  void add_buckets(const std::vector<size_t>& members, const std::vector<GradientShape>& shapes, int64_t bucket_bytes,
                   int unit);

  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> flat_params_;  // each parameter's elements in memory order (a 1-D view)
  std::vector<size_t> bucket_of_;
  std::vector<int64_t> offset_of_;  // in its bucket
  std::vector<Bucket> buckets_;
  std::vector<Piece> pieces_;
  std::vector<std::vector<size_t>> pieces_of_bucket_;  // indices into pieces_, per bucket
  // Buckets whose reduce-scatter may still be reading their whole flat, in launch order.
  std::vector<size_t> reducing_order_;
  static constexpr size_t kFlatsInFlight = 2;
  std::vector<Unit> units_;
  std::vector<int> unit_of_;                     // each parameter's unit, -1 for the root
  std::vector<bool> gathered_in_run_precision_;  // each parameter's (full, mixed precision)
  c10::ScalarType run_precision_;
  std::map<const torch::nn::Module*, size_t> unit_of_module_;
  std::vector<size_t> forward_order_;  // units in the order the first forward ran them
  bool order_known_ = false;
  int64_t gathered_bytes_ = 0, peak_gathered_bytes_ = 0;
  bool unsharded_ = false;
  std::function<void(const torch::Tensor&)> gather_observer_;
  CommHistory history_;
  bool recording_ = false;
  std::vector<const torch::optim::Optimizer*> optimizers_;
  ProcessGroup& group_;
  bool overlap_;
  Sharding stage_;
  bool reducing_ = true;  // the backward now running completes the step
  bool hooked_ = false;
  std::mutex mutex_;  // hooks may run on autograd's device threads
};

}  // namespace tbd
