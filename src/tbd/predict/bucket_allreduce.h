// The all-reduce a prediction for N ranks on this machine needs, measured in
// the ranks themselves (started by `tbd predict --nproc N`): the median time
// of an all-reduce of each gradient bucket's exact size among the N ranks
// (Gloo or NCCL, as the run would use), the ranks aligned by a barrier
// before each.
#pragma once

#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tbd {

class ProcessGroup;

// Collective: every rank calls it. Rank 0 gets {ranks, backend, allreduce:
// [{bytes, seconds}]}, the other ranks an empty document.
nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes);

}  // namespace tbd
