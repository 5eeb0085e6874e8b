// A probe watches a run and contributes a section to its result. It never
// knows which workload it watches; the runner calls it at fixed points.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "tbd/core/phases.h"

namespace tbd {

struct RunOptions;
struct WorkloadInfo;
struct Batch;
class Workload;
class GradientReducer;

struct RunContext {
  const RunOptions& options;  // resolved: batch size and threads filled in
  const WorkloadInfo& info;
  Workload& workload;
  c10::Device device;
  GradientReducer* gradient_reducer = nullptr;  // distributed runs only
};

struct IterationRecord {
  int repetition = 0;       // 0-based; -1 for warm-up
  int64_t index = 0;        // within its repetition (or warm-up)
  bool measured = false;    // false during warm-up
  double seconds = 0;       // wall time of the whole iteration, device synchronised
  std::optional<double> device_seconds;  // CUDA-event time of the same span (CUDA runs only)
  double data_wait_s = 0;   // part of it spent blocked in next_batch()
  int64_t samples = 0;      // in the workload's sample unit
  double loss = 0;
};

class Probe : public PhaseListener {
 public:
  virtual std::string name() const = 0;
  virtual void on_run_start(const RunContext&) {}
  virtual void on_window_begin(int repetition) {}  // a measured window starts
  virtual void on_window_end(int repetition) {}
  virtual void on_iteration_begin(bool measured) {}
  // The batch this iteration trains on, once next_batch() returned it (the
  // memory probe attributes its tensors to `inputs`).
  virtual void on_batch(const Batch&) {}
  virtual void on_iteration_end(const IterationRecord&) {}
  virtual void on_run_end(const RunContext&) {}
  // What the device's kernels did in the profiled iterations after the
  // measured windows (kernel_summary.h; CUDA runs with the gpu probe or --trace).
  virtual void on_kernel_profile(const nlohmann::json& kernels) {}
  // Adds this probe's keys to the result document.
  virtual void contribute(nlohmann::json& result) const = 0;
  // Lines for the human summary ("label", "text").
  virtual std::vector<std::pair<std::string, std::string>> summary_lines() const { return {}; }
};

// The probes this build knows, by name; `time` always runs.
std::vector<std::string> probe_names();
// Throws UsageError naming the known probes.
std::unique_ptr<Probe> make_probe(const std::string& name);

}  // namespace tbd
