// One rank's step of a sharded data-parallel run (--sharding, ZeRO 1-3),
// laid out on a single-process base's phase times and gradient timeline
// (docs/metrics.md#prediction) as a program: computation, collective
// launches and waits, in the order sharded_data_parallel.h issues them.
//
//   data
//   forward          full: before each wrapping unit, its all-gather (if
//                    not prefetched) is awaited and the next unit's
//                    launched; the unit computes
//   backward         each bucket's collective launched when its last
//                    gradient is ready (overlap off: when backward ends):
//                    an all-reduce (optimizer) or a reduce-scatter
//                    (gradients, full), at most two reduce-scatters in
//                    flight; full: before each unit's backward its
//                    all-gather is awaited and the previous unit's
//                    launched; every collective awaited when it ends
//   clipping         where the workload clips (workload.settings.
//                    max_gradient_norm): the norm's all-reduce of a float
//   optimizer / N    each rank steps its shard
//   all-gathers      the updated whole-parameter buckets, two in flight
//                    (full: the root's; a unit's shard is updated in place)
//   other
//
// A unit's forward time is its share of backward (the time from the
// previous unit's last gradient to its own) scaled by forward / backward,
// the root's computation split the same way; units run in the order the
// workload declares them (model.wrapping_units).
//
// The program is replayed with given collective times (replay_step: one
// channel, collectives in launch order) and played among real ranks on a
// stand-in computation to measure it in context (bucket_allreduce.h).
#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather };
const char* to_string(CollectiveKind kind);

// bytes: nccl-tests' size, the whole buffer (an all-gather's output, a
// reduce-scatter's input).
struct StepCollective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;
};

struct StepAction {
  enum class Type { compute, launch, wait };
  Type type = Type::compute;
  double seconds = 0;     // compute
  size_t collective = 0;  // launch, wait: index into ShardedStep::collectives
};

struct ShardedStep {
  std::vector<StepCollective> collectives;  // in launch order
  std::vector<StepAction> actions;
  double compute_s = 0;  // Σ compute
  // Bytes the step copies between parameters, gradients and the buckets
  // (read + write counted once each): gradients into their buckets, the
  // gathered buckets back into the whole parameters.
  double copied_bytes = 0;
};

// What --sharding full gathers of each wrapping unit, from a base's
// model.wrapping_units and gradients sections: under mixed precision
// (the base ran under autocast, bf16) the units' linear and convolution
// parameters travel in 2 B (as ShardedDataParallel gathers them), the rest
// at their element size. `autocast_copies`: the bytes of the copies autocast
// made of those parameters in the base and kept for backward (none under
// full, whose gathered parameters are already bf16): every unit's without
// activation checkpointing, 0 with it (a checkpointed unit keeps none; a
// selective policy's few are not subtracted). Throws Error where the base
// lacks the sections.
struct UnitGathers {
  std::vector<double> bytes;           // per unit, in forward order
  std::vector<double> gradient_bytes;  // per unit: its gradients, reduce-scattered at their element size (fp32)
  double autocast_copies = 0;
  bool mixed_precision = false;
};
UnitGathers unit_gathers(const nlohmann::json& base);

struct ShardedStepPlan {
  int ranks = 2;
  Sharding sharding = Sharding::gradients;
  double bucket_mb = 25;
  bool overlap = true;
};

// `phases`: the rank's phase times (the base's `phases`, or co-located
// copies'). Throws Error naming what the base lacks (a gradient timeline;
// for full, model.wrapping_units with parameter_units, or a step of one
// backward pass).
ShardedStep sharded_step(const nlohmann::json& base, const nlohmann::json& phases, const ShardedStepPlan& plan);

struct StepReplay {
  double exposed_s = 0;         // what the waits add to the computation
  double busy_s = 0;            // Σ collective times
  std::vector<double> seconds;  // each collective's time, as ShardedStep::collectives
};
StepReplay replay_step(const ShardedStep& step, const std::function<double(const StepCollective&)>& seconds);

// Ring collectives for a bus bandwidth a user gives (nccl-tests' bus
// bandwidth convention): latency + factor · bytes / bus, the factor
// 2(N−1)/N for an all-reduce and (N−1)/N for a reduce-scatter or all-gather.
double ring_collective_seconds(const StepCollective& c, int ranks, double bus_bytes_per_s, double latency_s);

}  // namespace tbd
