// time: iteration-time statistics and throughput (docs/metrics.md#time).
#pragma once

#include <string>
#include <vector>

#include "tbd/core/statistics.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

class TimeProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_iteration_end(const IterationRecord& r) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // Throughput with its interval and the units the interval is over.
  struct Rate {
    RatioEstimate estimate;
    std::string interval_over;  // "repetitions" or "iterations"
    int64_t units = 0;          // how many of them
  };

 private:
  Rate rate() const;
  std::string unit_;
  std::vector<double> seconds_, samples_;
  std::vector<double> device_seconds_;  // CUDA-event times, CUDA runs only
  std::string device_;
  nlohmann::json phase_section() const;
  std::vector<int> repetition_;
  struct PhaseTotals {
    double data_s = 0;
    PhaseClock phases;
  } phase_totals_;  // summed over the timed iterations
};

}  // namespace tbd
