// The table of contents of tbd's workloads, in the order `tbd list` shows.
#include "tbd/workloads/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbd/core/error.h"
#include "tbd/workloads/workloads.h"

namespace tbd {

const std::vector<RegistryEntry>& workload_registry() {
  static const std::vector<RegistryEntry> entries = {
      {"resnet50", make_resnet50},
      {"inception3", make_inception3},
      {"seq2seq", make_seq2seq},
      {"transformer", make_transformer},
      {"faster_rcnn", make_faster_rcnn},
      {"deepspeech2", make_deepspeech2},
      {"wgan", make_wgan},
      {"a3c", make_a3c},
      {"ncf", make_ncf},
      {"dlrm", make_dlrm},
      {"gpt", make_gpt},
      {"llama", make_llama},
  };
  return entries;
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& e : workload_registry()) names.push_back(e.name);
  return names;
}

void check_activation_checkpointing_supported(const WorkloadInfo& workload, const RunOptions& options) {
  if (!options.activation_checkpointing.enabled() || workload.checkpointable_blocks) return;
  std::vector<std::string> supported;
  for (const auto& e : workload_registry())
    if (e.create()->info().checkpointable_blocks) supported.push_back(e.name);
  throw UsageError(fmt::format(
      "--activation-checkpointing {}: {} has no transformer blocks to re-run; it applies to {} "
      "(use --activation-checkpointing none, or leave it out, for {})",
      to_string(options.activation_checkpointing), workload.name, fmt::join(supported, ", "), workload.name));
}

std::unique_ptr<Workload> create_workload(const std::string& name) {
  for (const auto& e : workload_registry())
    if (e.name == name) return e.create();
  throw UsageError(fmt::format("unknown workload '{}'; known workloads: {} (see `tbd list`)", name,
                               fmt::join(workload_names(), ", ")));
}

}  // namespace tbd
