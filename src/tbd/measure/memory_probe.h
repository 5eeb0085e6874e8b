// memory: peak live bytes and what they are (docs/metrics.md#memory).
//
// Every allocation and free reaches this probe through c10's memory-usage
// reporting: a reporter installed as the thread's PROFILER_STATE debug info,
// which LibTorch propagates to autograd's threads. The reporter is a
// ProfilerStateBase whose profiler config is "disabled", so Kineto (or any
// other profiler) still starts on top of it and sees no profiler running.
// Blocks are attributed to categories from the workload's state (weights,
// gradients, optimizer state, the batch) and from the phase that allocated
// them and whether they outlived it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tbd/measure/probe.h"

namespace tbd {

enum class MemoryCategory {
  weights,
  weight_gradients,
  optimizer_state,
  inputs,
  feature_maps,
  workspace,
  dynamic,
  other
};
constexpr int kMemoryCategories = 8;
const char* to_string(MemoryCategory c);

using MemoryBreakdown = std::array<int64_t, kMemoryCategories>;  // bytes per category

struct MemoryPoint {  // one point of the timeline, at a phase boundary or the peak
  double t_s = 0;     // seconds since the first measured iteration began
  int64_t iteration = 0;
  std::string event;  // "forward_begin", "forward_end", ..., "peak"
  MemoryBreakdown bytes{};
};

class MemoryTracker;  // the allocation bookkeeping, shared with the reporter

class MemoryProbe : public Probe {
 public:
  MemoryProbe();
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

  // The same hooks without a runner, for tests: start tracking with this
  // state (weights, buffers, optimizer state), stop tracking.
  void start(const std::vector<at::Tensor>& weights, const std::vector<at::Tensor>& buffers,
             const std::vector<at::Tensor>& optimizer_state, c10::Device device);
  void stop();
  // Where the optimizer state is read after each optimizer phase (optimizers
  // create it lazily, at the first step).
  void set_optimizer_state_source(std::function<std::vector<at::Tensor>()> source);

  int64_t peak_bytes() const;
  MemoryBreakdown peak_breakdown() const;
  std::vector<MemoryPoint> timeline() const;
  std::array<int64_t, kPhaseCount> phase_peaks() const;  // by phase_index()

 private:
  std::shared_ptr<MemoryTracker> tracker_;
  std::shared_ptr<void> reporter_;  // the installed debug info, kept alive until stop()
  std::function<std::vector<at::Tensor>()> optimizer_state_source_;
  Workload* workload_ = nullptr;
  c10::Device device_obj_{c10::kCPU};
  bool installed_ = false;
  std::string device_, not_available_;
  // Weights and optimizer state the probe recognises; gradients are read off
  // the weights at the end of each backward phase.
  std::vector<at::Tensor> weights_, optimizer_state_;
  std::vector<void*> batch_externals_;  // batch storages allocated before tracking began
  nlohmann::json allocator_;            // the CUDA caching allocator's statistics, CUDA runs
};

}  // namespace tbd
