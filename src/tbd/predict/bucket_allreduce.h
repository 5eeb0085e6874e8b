// The gradient communication a prediction for N ranks on this machine
// needs, measured in the ranks themselves (started by `tbd predict --nproc
// N`): the median time of an all-reduce of each gradient bucket's exact
// size among the N ranks (Gloo or NCCL, as the run would use), the ranks
// aligned by a barrier before each, for the replay; and what one
// iteration's whole communication costs in context: the step's schedule
// (data_parallel_model.h: step_schedule) played on a stand-in computation,
// every bucket's all-reduce launched when its gradients would be ready and
// the sparse gradients (embedding tables, stacked as the reducer stacks
// them: sparse_allreduce.h) when backward ends (see the .cpp for why).
#pragma once

#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

class ProcessGroup;
struct ShardedStep;
struct SparseGradient;
struct StepSchedule;

// Collective: every rank calls it. Rank 0 gets {ranks, backend, allreduce:
// [{bytes, seconds}], in_context: {seconds, ..., sparse_back_to_back_seconds
// (null without sparse gradients)}, sparse_gradients: count}, the other ranks
// an empty document.
nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device, const StepSchedule& schedule,
                                         const std::vector<SparseGradient>& sparse);

// The same for a sharded run (--sharding, sharded_step.h): each distinct
// collective of the step (kind and size) timed alone, and the step's
// program played on the stand-in with and without its collectives. Rank 0
// gets {ranks, backend, collectives: [{kind, bytes, seconds}], in_context:
// {seconds, ...}}, the other ranks an empty document.
nlohmann::json measure_sharded_collectives(ProcessGroup& group, c10::Device device, const ShardedStep& step);

// Collective: dlrm's lookups as a placed run does them (--embedding-sharding
// table|row), in context: each rank draws bags of the base's shape (its own
// stream, the base's skew) and pools them through its part of the tables
// (dist/sharded_embedding_bags.h: the all-to-alls of lengths, ids and rows
// inside, each rank waiting for the others there), then backward (the
// rows' gradients sent back, the sparse table gradients made); then the
// same bags pooled from whole tables, as the replicated base does, all
// ranks at once. Rank 0's medians of 11 iterations after 2 (seconds), on
// every rank: {placed_s, replicated_s}.
struct EmbeddingLookups;
nlohmann::json measure_placed_lookups(ProcessGroup& group, c10::Device device, const EmbeddingLookups& lookups,
                                      EmbeddingSharding how);

}  // namespace tbd
