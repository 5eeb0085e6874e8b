// memory: peak live bytes and what they are (docs/metrics.md#memory).
//
// Every allocation and free reaches this probe through c10's memory-usage
// reporting: a reporter installed as the thread's PROFILER_STATE debug info,
// which LibTorch propagates to autograd's threads. The reporter is a
// ProfilerStateBase whose profiler config is "disabled", so Kineto (or any
// other profiler) still starts on top of it and sees no profiler running.
// Blocks are attributed to categories from the workload's state (weights,
// gradients, optimizer state, the batch) and from the phase that allocated
// them and whether they outlived it; memory_tracker.h keeps those books.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tbd/core/parameter_set.h"
#include "tbd/measure/probes/memory_tracker.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

class MemoryProbe : public Probe {
 public:
  // Where the probe reads the training state it recognises: the weights,
  // buffers and optimizer state (optimizers create theirs lazily, so it is
  // read again after each optimizer phase).
  using StateSource = std::function<ParameterSet()>;

  // In a run: the workload's state() and device, from on_run_start.
  MemoryProbe();
  // Without a runner (tests): this state, on `device`. A seam at
  // construction rather than test-only setters, so a test drives the probe
  // through the runner's own hooks (on_window_begin starts tracking, as in a
  // run) and the probe's interface is the Probe one.
  explicit MemoryProbe(StateSource state, c10::Device device = c10::kCPU);
  ~MemoryProbe() override;
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_iteration_begin(bool measured) override;
  void on_batch(const Batch& batch) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_run_end(const RunContext& ctx) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // What was recorded, typed (contribute() writes it as JSON).
  const MemoryTracker& tracker() const { return *tracker_; }

 private:
  void start(const ParameterSet& state);
  void stop();

  std::shared_ptr<MemoryTracker> tracker_;  // shared with the installed reporter
  std::shared_ptr<void> reporter_;          // the installed debug info, kept alive until stop()
  StateSource state_;
  c10::Device device_obj_{c10::kCPU};
  bool installed_ = false;
  std::string device_, not_available_;
  long long limit_bytes_ = 0;  // --memory-limit; 0: none given
  // Weights and optimizer state the probe recognises; gradients are read off
  // the weights at the end of each backward phase.
  std::vector<at::Tensor> weights_, optimizer_state_;
  ShardedDataParallel* sharded_ = nullptr;  // --sharding: its buckets are gradients, its shards and gathers weights
  std::vector<void*> batch_externals_;      // batch storages allocated before tracking began
  nlohmann::json allocator_;                // the CUDA caching allocator's statistics, CUDA runs
};

}  // namespace tbd
