// The all-reduce a prediction for N ranks on this machine needs, measured in
// the ranks themselves (started by `tbd predict --nproc N`): the median time
// of an all-reduce of each gradient bucket's exact size among the N ranks
// (Gloo or NCCL, as the run would use), the ranks aligned by a barrier
// before each; and one iteration's sparse all-reduce (embedding tables,
// stacked as the reducer stacks them: sparse_allreduce.h), on gradients of
// the base's shapes and entries.
#pragma once

#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tbd {

class ProcessGroup;
struct SparseGradient;

// Collective: every rank calls it. Rank 0 gets {ranks, backend, allreduce:
// [{bytes, seconds}], sparse_allreduce_seconds}, the other ranks an empty document.
nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes,
                                         const std::vector<SparseGradient>& sparse);

}  // namespace tbd
