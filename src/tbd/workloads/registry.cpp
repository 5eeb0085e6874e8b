// The table of contents of tbd's workloads, in the order `tbd list` shows.
#include "tbd/core/registry.h"
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
  };
  return entries;
}

}  // namespace tbd
