// gpu: utilisation, memory and power of the run's GPU sampled through NVML
// on a thread during the measured windows, and the kernel view (busy share,
// time per kernel) of a few Kineto-profiled iterations after them
// (docs/metrics.md#gpu).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tbd/measure/machine/nvml.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

class GpuProbe : public Probe {
 public:
  explicit GpuProbe(std::string nvml_library = "libnvidia-ml.so.1", double period_s = 0.1);
  ~GpuProbe() override;
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  // The kernel view needs Kineto-profiled iterations, on CUDA only.
  bool wants_kernel_profile(const RunContext& ctx) const override { return ctx.device.is_cuda(); }
  void on_kernel_profile(const nlohmann::json& kernels) override { kernels_ = kernels; }
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  void stop_sampler();
  nlohmann::json kernel_section() const;
  std::string kernel_line() const;
  std::string library_;
  double period_s_;
  std::unique_ptr<Nvml> nvml_;
  std::string why_;
  int gpu_ = -1;
  std::string device_name_;
  std::thread sampler_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<NvmlSample> samples_;
  nlohmann::json kernels_;  // summarize_kernels() of the profiled iterations, CUDA runs
  bool cuda_ = false;
};

}  // namespace tbd
