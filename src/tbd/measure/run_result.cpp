// The last step of a run: the tbd.result/1 document and the summary lines,
// from what the session's steps recorded (docs/metrics.md lists every key).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <torch/nn/module.h>

#include "tbd/measure/machine/peak.h"
#include "tbd/measure/machine/timing_conditions.h"
#include "tbd/measure/model_flops_utilisation.h"
#include "tbd/measure/run_session.h"
#include "tbd/nn/shard_unit.h"

namespace tbd {

namespace {

// The workload's wrapping units (--sharding full) in trainable elements,
// so `tbd predict --sharding full` can size them from any run, and each
// trainable parameter's unit (in the gradients section's order: the
// weights that require a gradient), so it can replay their gathers and
// reduce-scatters; null without units.
nlohmann::json wrapping_units(const Workload& workload, const ParameterSet& state) {
  const auto units = workload.shard_units();
  if (units.empty()) return nullptr;
  // A parameter counts in the first unit that holds it; units without one
  // are skipped, as the sharded reducer skips them.
  std::map<const c10::TensorImpl*, int> unit_of;
  std::set<const c10::TensorImpl*> cast;
  int64_t largest = 0, in_units = 0;
  int numbered = 0;
  for (const auto& unit : units) {
    int64_t elements = 0;
    for (const auto& p : unit->parameters())
      if (p.requires_grad() && unit_of.emplace(p.unsafeGetTensorImpl(), numbered).second) elements += p.numel();
    if (elements == 0) continue;
    for (const auto& p : nn::parameters_cast_by_autocast(*unit)) cast.insert(p.unsafeGetTensorImpl());
    ++numbered;
    largest = std::max(largest, elements);
    in_units += elements;
  }
  nlohmann::json parameter_units = nlohmann::json::array(), cast_by_autocast = nlohmann::json::array();
  for (const auto& p : state.weights)
    if (p.requires_grad()) {
      const auto it = unit_of.find(p.unsafeGetTensorImpl());
      parameter_units.push_back(it == unit_of.end() ? -1 : it->second);
      cast_by_autocast.push_back(it != unit_of.end() && cast.contains(p.unsafeGetTensorImpl()));
    }
  return {{"count", numbered},
          {"largest_unit_elements", largest},
          {"root_elements", state.trainable_parameter_count() - in_units},
          {"parameter_units", parameter_units},
          {"parameter_cast_by_autocast", cast_by_autocast},
          {"definition",
           "the modules --sharding full gathers one at a time, in forward order (docs/distributed.md#sharding): "
           "how many, the trainable elements of the largest, those outside every unit (kept whole), each "
           "trainable parameter's unit (-1: outside every unit), in the order of gradients.elements, and "
           "whether it is a unit's linear or convolution weight or bias (autocast casts it; full gathers it in "
           "the run's precision under bf16)"}};
}

}  // namespace
namespace {

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

// Declared settings with the values setup() resolved laid over them.
std::map<std::string, std::string> recorded_settings(const Session& s) {
  auto values = s.settings.values();
  for (const auto& [key, value] : s.workload->resolved_settings()) values[key] = value;
  return values;
}

nlohmann::json workload_section(const Session& s) {
  const WorkloadInfo& info = s.workload->info();
  nlohmann::json options = to_json(s.options);
  options["workload"] = info.name;
  return {{"name", info.name},
          {"domain", info.domain},
          {"model", s.workload->model_title(s.settings)},
          {"dataset", info.dataset},
          {"sample_unit", info.sample_unit},
          {"batch_unit", batch_unit_of(info)},
          {"variable_shapes", info.variable_shapes},
          {"default_batch", info.default_batch},
          {"options", options},
          // The samples behind one optimizer step (docs/metrics.md#batch).
          {"batch",
           {{"micro_batch", s.options.batch_size},
            {"grad_accum", s.options.grad_accum},
            {"ranks", s.options.world_size},
            {"global_batch", s.options.global_batch()},
            {"unit", batch_unit_of(info)}}},
          {"settings", recorded_settings(s)},
          {"configuration", s.workload->configuration()}};
}

// In a distributed run the headline is the global throughput; the time
// probe's own line is rank 0's.
void headline_global_throughput(const Session& s, std::vector<std::pair<std::string, std::string>>& lines) {
  if (!s.distributed.is_object()) return;
  for (auto& [label, text] : lines)
    if (label == "throughput") label = "rank 0";
  const std::string unit = s.workload->info().sample_unit;
  lines.insert(lines.begin(), {"throughput", fmt::format("{:.4g} {}/s across {} ranks (sum of every rank's timed "
                                                         "throughput; global batch {})",
                                                         s.distributed["global_samples_per_s"].get<double>(), unit,
                                                         s.options.world_size, s.options.global_batch())});
}

// Token workloads (a model_flops.per_token in their configuration): tokens/s
// per device and MFU, in the result and next to the throughput line.
void add_mfu(const Session& s, nlohmann::json& result, std::vector<std::pair<std::string, std::string>>& lines) {
  if (!result["workload"]["configuration"].contains("model_flops")) return;
  const std::string dtype = to_string(s.options.precision);
  const auto section = model_flops_utilisation(result, peaks_for_run(s.device, s.options.threads, dtype), dtype);
  if (!section) return;
  result["mfu"] = *section;
  auto at = lines.begin();
  while (at != lines.end() && at->first != "throughput") ++at;
  lines.insert(at == lines.end() ? at : at + 1, {"MFU", mfu_summary(*section)});
}

// --cuda-graphs as asked and as it ran (docs/gpu.md#cuda-graphs).
nlohmann::json cuda_graphs_section(const Session& s) {
  nlohmann::json g = {
      {"requested", to_string(s.options.cuda_graphs)},
      {"used", s.graph_step != nullptr},
      {"reason", s.cuda_graphs.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.cuda_graphs.reason)},
      {"definition",
       "used: the timed and profiled iterations ran the step as one captured CUDA graph, replayed "
       "(after eager iterations and one capture, all in warm-up); the instrumented iterations run "
       "eagerly; reason: why auto ran eagerly"}};
  if (s.graph_step) g.update(s.graph_step->describe());
  return g;
}

std::string cuda_graphs_summary(const Session& s) {
  if (!s.graph_step) return "not used (" + s.cuda_graphs.reason + ")";
  const nlohmann::json d = s.graph_step->describe();
  std::string line = "the step replayed as one CUDA graph " + std::to_string(d["replays"].get<int64_t>()) +
                     " times, captured after " + std::to_string(d["eager_iterations_before_capture"].get<int64_t>()) +
                     " eager iterations";
  if (const auto other = d["eager_iterations_of_other_shapes"].get<int64_t>(); other > 0)
    line += "; " + std::to_string(other) + " iterations of another batch shape ran eagerly";
  return line;
}

}  // namespace

RunOutcome assemble_result(Session& s, const TraceRequest& trace) {
  nlohmann::json result;
  result["schema"] = "tbd.result/1";
  result["created_utc"] = s.created_utc;
  result["environment"] = s.environment;
  result["workload"] = workload_section(s);
  result["partial"] = s.partial;
  result["framework"] = {{"cudnn_benchmark", s.cudnn_benchmark},
                         {"host_allocator",
                          {{"requested", s.host_allocator.requested},
                           {"applied", s.host_allocator.applied},
                           {"detail", s.host_allocator.detail}}},
                         {"definition",
                          "cudnn_benchmark: cuDNN's autotuner chose each convolution/RNN algorithm by timing the "
                          "candidates on first use (CUDA runs of workloads whose shapes repeat); host_allocator: "
                          "what the C allocator does with freed host memory (retain: kept for the next iteration)"}};
  result["framework"]["cuda_graphs"] = cuda_graphs_section(s);
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& [begin, end] : s.wall_clock.windows) windows.push_back({{"start", begin}, {"end", end}});
  result["wall_clock"] = {{"unit", "ms since the Unix epoch (system clock)"},
                          {"start", s.wall_clock.start},
                          {"setup_end", s.wall_clock.setup_end},
                          {"warmup_end", s.wall_clock.warmup_end},
                          {"windows", windows},
                          {"end", s.wall_clock.end},
                          {"definition",
                           "when the run began, its workload was built (and peers joined), the "
                           "warm-up ended, each timed repetition began and ended, and the run "
                           "ended; --mllog's events carry these times"}};
  result["warmup"] = {{"iterations", s.warmup.iterations},
                      {"mode", s.options.warmup_auto ? "auto" : "fixed"},
                      {"ended_by", s.warmup.ended_by},
                      {"seconds", s.warmup.seconds}};
  result["batch_shapes"] = {
      {"declared", s.warmup.shapes_declared > 0 ? nlohmann::json(s.warmup.shapes_declared) : nlohmann::json(nullptr)},
      {"warmup", s.shapes.warmup},
      {"timed", s.shapes.timed},
      {"timed_iterations_first_seen", s.shapes.timed_first_seen},
      {"warmup_cap_reached", s.warmup.shapes_cap}};
  const ParameterSet state = s.workload->state();
  result["model"] = {{"parameters", state.parameter_count()},
                     {"trainable_parameters", state.trainable_parameter_count()}};
  if (const auto units = wrapping_units(*s.workload, state); !units.is_null())
    result["model"]["wrapping_units"] = units;
  result["loss"] = {{"first_measured", number_or_null(s.first_loss)}, {"last_measured", number_or_null(s.last_loss)}};
  if (s.scaler)
    result["loss_scaling"] = {{"final_scale", s.scaler->current_scale()},
                              {"optimizer_steps", s.scaler->steps()},
                              {"skipped_steps", s.scaler->skipped_steps()}};
  if (!s.workload_metrics.is_null()) result["workload_metrics"] = s.workload_metrics;
  nlohmann::json analysis_names = nlohmann::json::array();
  for (auto* p : s.analysis_probes) analysis_names.push_back(p->name());
  result["instrumented"] = {{"iterations", s.instrumented_iterations},
                            {"probes", analysis_names},
                            {"note",
                             "iterations after the timed windows in which the analysis probes ran; "
                             "they are in no time statistic"}};
  if (s.conditions_start && s.conditions_end)
    result["timing_conditions"] = timing_conditions(*s.conditions_start, *s.conditions_end);
  if (s.distributed.is_object()) result["distributed"] = s.distributed;
  if (!s.trace.is_null()) result["trace"] = s.trace;
  if (!s.execution_trace.is_null()) result["execution_trace"] = s.execution_trace;

  RunOutcome outcome;
  if (s.workload_metrics.is_object() && s.workload_metrics.contains("summary"))
    outcome.summary.push_back({s.workload->info().name, s.workload_metrics["summary"].get<std::string>()});
  result["probes"] = nlohmann::json::array();
  // The time probe comes first (make_probes), so its sections exist when the
  // others contribute.
  for (auto& p : s.probes) {
    result["probes"].push_back(p->name());
    p->contribute(result);
    for (auto& line : p->summary_lines()) outcome.summary.push_back(line);
  }
  add_mfu(s, result, outcome.summary);
  headline_global_throughput(s, outcome.summary);
  if (s.options.cuda_graphs != CudaGraphs::off) outcome.summary.push_back({"cuda graphs", cuda_graphs_summary(s)});
  if (result.contains("trace") && result["trace"].contains("error"))
    outcome.summary.push_back({"trace", "NOT WRITTEN: " + result["trace"]["error"].get<std::string>()});
  else if (result.contains("trace"))
    outcome.summary.push_back({"trace", result["trace"]["file"].get<std::string>() + " (" +
                                            std::to_string(trace.iterations) +
                                            " iterations after the timed windows; open in Perfetto)"});
  if (result.contains("execution_trace") && result["execution_trace"].contains("error"))
    outcome.summary.push_back({"exec trace", "NOT WRITTEN: " + result["execution_trace"]["error"].get<std::string>()});
  else if (result.contains("execution_trace"))
    outcome.summary.push_back({"exec trace", result["execution_trace"]["file"].get<std::string>() +
                                                 " (PyTorch execution trace; Chakra converts it)"});
  result["warnings"] = noise_warnings(result);
  for (const auto& w : result["warnings"]) outcome.summary.push_back({"warning", w.get<std::string>()});
  outcome.result = std::move(result);
  outcome.partial = s.partial;
  outcome.rank = s.options.rank;
  return outcome;
}

}  // namespace tbd
