// cpu: process CPU time over the measured windows, against the wall time and
// the intra-op threads the run allows (docs/metrics.md#cpu).
#pragma once

#include "tbd/measure/probes/probe.h"

namespace tbd {

class CpuProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  int threads_ = 1, available_cores_ = 1;
  double user0_ = 0, system0_ = 0, wall0_ = 0;
  double user_s_ = 0, system_s_ = 0, wall_s_ = 0;
};

}  // namespace tbd
