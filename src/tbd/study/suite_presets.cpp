#include "tbd/study/suite_presets.h"

#include <map>
#include <set>

#include "tbd/core/error.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/study/comma_list.h"

namespace tbd {
namespace {

// The default probes and the operator view.
std::string preset_probes() { return join_commas(default_probes()) + ",ops"; }

// The quick preset: every registered workload (read from the registry, so new
// ones join automatically) at a small scale with few iterations. The
// per-workload lines keep the whole preset within 10 minutes on 2 CPU cores
// (measured: docs/analysis.md); a workload without a line gets the default.
std::vector<std::string> quick_options(const std::string& workload) {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"resnet50", {"--scale", "small", "--batch-size", "8"}},
      {"seq2seq", {"--scale", "small", "--batch-size", "16"}},
      // transformer's batch counts tokens: 512 is 16 sentence pairs of ~30 tokens.
      {"transformer", {"--scale", "small", "--batch-size", "512"}},
      {"gpt", {"--scale", "small", "--batch-size", "4"}},
      {"deepspeech2", {"--scale", "small", "--batch-size", "4"}},
      {"ncf", {"--scale", "small"}},
      {"dlrm", {"--scale", "small"}},
  };
  std::vector<std::string> args = {"--scale", "tiny"};
  if (auto it = table.find(workload); it != table.end()) args = it->second;
  // Three repetitions, so compare has a unit-to-unit spread to judge with;
  // 2 warm-up + 3 × 2 timed + 2 instrumented iterations: as many as the
  // preset ran before the windows were split (2 + 8).
  args.insert(args.end(), {"--warmup", "2", "--iters", "2", "--repeat", "3", "--instrument-iters", "2", "--probes",
                           preset_probes()});
  return args;
}

// The gpu preset (scripts/gpu-check): full scale at batch sizes that keep a
// large GPU (an 80-141 GB H100 or H200) busy, few iterations, the GPU probes.
// A workload without a line keeps its default batch size.
std::vector<std::string> gpu_options(const std::string& workload) {
  static const std::map<std::string, std::string> batch = {
      {"resnet50", "256"},   {"inception3", "128"}, {"seq2seq", "256"}, {"transformer", "16384"}, {"faster_rcnn", "8"},
      {"deepspeech2", "32"}, {"wgan", "128"},       {"ncf", "65536"},   {"dlrm", "8192"},         {"gpt", "16"},
  };
  std::vector<std::string> args = {"--scale", "full", "--warmup", "3", "--iters", "4", "--repeat", "3"};
  args.insert(args.end(), {"--probes", join_commas(default_probes()) + ",gpu"});
  if (auto it = batch.find(workload); it != batch.end()) args.insert(args.end(), {"--batch-size", it->second});
  // Llama 3.1 8B's fp32 weights, gradients and AdamW moments are 128 GB: more
  // than one GPU holds without sharding. 1B's are 20 GB.
  if (workload == "llama") args.insert(args.end(), {"--set", "size=1b"});
  return args;
}

// The paper preset: TBD's configurations, the workload's default batch size, full scale.
std::vector<std::string> paper_options(const std::string&) {
  return {"--scale", "full", "--warmup", "5", "--iters", "4", "--repeat", "5", "--probes", preset_probes()};
}

// A flag's name ("--iters" of "--iters 5" or "--iters=5"); "" when not a flag.
std::string flag_name(const std::string& token) {
  if (token.rfind("--", 0) != 0) return "";
  return token.substr(0, token.find('='));
}

}  // namespace

std::vector<std::string> suite_preset_names() { return {"quick", "paper", "gpu"}; }

std::vector<std::string> suite_preset_options(const std::string& preset, const std::string& workload) {
  if (preset == "quick") return quick_options(workload);
  if (preset == "paper") return paper_options(workload);
  if (preset == "gpu") return gpu_options(workload);
  throw UsageError("--preset must be quick, paper or gpu, got '" + preset + "'");
}

std::vector<std::string> merge_options(const std::vector<std::string>& preset,
                                       const std::vector<std::string>& overrides) {
  std::set<std::string> replaced;
  for (const auto& t : overrides)
    if (!flag_name(t).empty() && flag_name(t) != "--set") replaced.insert(flag_name(t));
  std::vector<std::string> merged;
  bool dropping = false;
  for (const auto& t : preset) {
    if (!flag_name(t).empty()) dropping = replaced.count(flag_name(t)) > 0;
    if (!dropping) merged.push_back(t);
  }
  merged.insert(merged.end(), overrides.begin(), overrides.end());
  return merged;
}

}  // namespace tbd
