// The all-reduce a prediction for N ranks on this machine needs, measured in
// the ranks themselves (started by `tbd predict --nproc N`): the median time
// of an all-reduce of each gradient bucket's exact size among the N ranks
// (Gloo or NCCL, as the run would use), the ranks aligned by a barrier
// before each; and what one iteration's sparse all-reduce (embedding
// tables, stacked as the reducer stacks them: sparse_allreduce.h, on
// gradients of the base's shapes and entries) costs in context: launched
// with the last bucket's all-reduce between stand-in computations as long
// as the base's step (see the .cpp for why).
#pragma once

#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tbd {

class ProcessGroup;
struct SparseGradient;

// Collective: every rank calls it. Rank 0 gets {ranks, backend, allreduce:
// [{bytes, seconds}], sparse_allreduce: {seconds, ...} or null without
// sparse gradients}, the other ranks an empty document. `step_seconds`: the
// base's computation per iteration (the stand-in's length).
nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes,
                                         const std::vector<SparseGradient>& sparse, double step_seconds);

}  // namespace tbd
