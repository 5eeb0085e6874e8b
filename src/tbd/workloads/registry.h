// The explicit list of workloads (workloads/registry.cpp), so the
// linker never drops one and the list reads as a table of contents.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tbd/core/workload.h"

namespace tbd {

struct RegistryEntry {
  std::string name;
  std::function<std::unique_ptr<Workload>()> create;
};

const std::vector<RegistryEntry>& workload_registry();

// Throws UsageError naming the known workloads.
std::unique_ptr<Workload> create_workload(const std::string& name);

std::vector<std::string> workload_names();

// Throws UsageError when `options` ask for activation checkpointing and the
// workload has no transformer blocks to checkpoint (WorkloadInfo::
// checkpointable_blocks), naming the workloads that have them.
void check_activation_checkpointing_supported(const WorkloadInfo& workload, const RunOptions& options);

}  // namespace tbd
