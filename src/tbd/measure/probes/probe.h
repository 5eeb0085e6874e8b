// A probe watches a run and contributes a section to its result. It never
// knows which workload it watches; the runner calls it at fixed points.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
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
class ShardedDataParallel;
class CollectiveLog;

struct RunContext {
  const RunOptions& options;  // resolved: batch size and threads filled in
  const WorkloadInfo& info;
  Workload& workload;
  c10::Device device;
  GradientReducer* gradient_reducer = nullptr;  // distributed runs only
  ShardedDataParallel* sharded = nullptr;       // --sharding runs only
  CollectiveLog* model_collectives = nullptr;   // Workload::model_collectives()
};

struct IterationRecord {
  int repetition = 0;                    // 0-based; -1 for warm-up and instrumented iterations
  int64_t index = 0;                     // within its repetition (or warm-up)
  bool measured = false;                 // a timed or instrumented iteration; false during warm-up
  double seconds = 0;                    // wall time of the whole iteration, device synchronised
  std::optional<double> device_seconds;  // CUDA-event time of the same span (CUDA runs only)
  double data_wait_s = 0;                // part of it spent blocked in next_batch()
  int64_t samples = 0;                   // in the workload's sample unit
  PhaseClock phases;                     // host time in forward, backward, optimizer and the gradient sync
  double loss = 0;
};

// Which iterations a probe watches (docs/architecture.md, "Run lifecycle").
//  - timed: costs (next to) nothing per iteration, so it runs inside the timed
//    windows: time, data, cpu, energy, gpu (NVML sampling), comm.
//  - analysis: instruments every op or allocation, which slows the step, so it
//    runs only in the instrumented iterations after the timed windows (flops,
//    memory, ops). Its per-iteration figures combine with the clean timing
//    through on_timed_figures().
enum class ProbeKind { timed, analysis };

// The clean timing of the timed windows, handed to analysis probes so that
// rates (FLOP/s, utilisation) use the uninstrumented step's time.
struct TimedFigures {
  int64_t iterations = 0;  // timed iterations that completed
  double samples = 0;      // their samples, in the workload's unit
  double seconds = 0;      // their summed iteration time
  double samples_per_s() const { return seconds > 0 ? samples / seconds : 0; }
};

class Probe : public PhaseListener {
 public:
  // Its row of the probe table (probe_table()).
  std::string name() const;
  ProbeKind kind() const;
  // Set-up only: an analysis probe installs nothing here (its callbacks
  // would run in the timed windows); it starts in on_window_begin.
  virtual void on_run_start(const RunContext&) {}
  // Timed probes: each timed window (repetition 0, 1, ...). Analysis probes:
  // once, around the instrumented iterations (repetition 0).
  virtual void on_window_begin(int repetition) {}
  virtual void on_window_end(int repetition) {}
  // Whether this run needs the Kineto-profiled iterations after the windows
  // for this probe (the gpu probe's kernel view, on CUDA).
  virtual bool wants_kernel_profile(const RunContext&) const { return false; }
  // Analysis probes: the timed windows' figures, before contribute().
  virtual void on_timed_figures(const TimedFigures&) {}
  // `measured`: a timed (timed probes) or instrumented (analysis probes)
  // iteration, false for warm-up.
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

// One row per probe this build knows: the one place its name and kind are
// written and it is made. probe_names(), make_probe() and each probe's
// name() and kind() read it; a probe finds its row by its class.
struct ProbeEntry {
  const char* name;
  ProbeKind kind;
  std::type_index type;
  std::unique_ptr<Probe> (*make)();
};
const std::vector<ProbeEntry>& probe_table();

// The probes this build knows, by name, in the table's order; `time` always runs.
std::vector<std::string> probe_names();
// What `tbd run` measures when --probes is not given (one list for every command).
std::vector<std::string> default_probes();
// Throws UsageError naming the known probes.
std::unique_ptr<Probe> make_probe(const std::string& name);
// The probes of one run: `time` first (always), then `requested` in order
// (duplicates dropped), and `comm` in distributed runs (they always say
// what their communication cost). Throws UsageError for an unknown name.
std::vector<std::unique_ptr<Probe>> make_probes(const std::vector<std::string>& requested, bool distributed);

}  // namespace tbd
