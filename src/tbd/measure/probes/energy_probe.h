// energy: joules over the measured window and per sample, from the NVML
// energy counter of the run's GPU and from RAPL package counters
// (docs/metrics.md#energy).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tbd/measure/machine/nvml.h"
#include "tbd/measure/machine/rapl.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

class EnergyProbe : public Probe {
 public:
  // Empty arguments: the defaults ($TBD_POWERCAP_DIR or /sys/class/powercap;
  // libnvidia-ml.so.1). Tests point them at fakes.
  explicit EnergyProbe(std::string powercap_root = "", std::string nvml_library = "libnvidia-ml.so.1");
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_window_end(int repetition) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  std::string powercap_root_, nvml_library_;
  std::unique_ptr<Rapl> rapl_;
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_why_;
  int gpu_ = -1;
  std::optional<double> nvml_begin_j_;
  double rapl_j_ = 0, nvml_j_ = 0, rapl_before_ = 0;
  double samples_ = 0, seconds_ = 0;
  std::string unit_;
};

}  // namespace tbd
