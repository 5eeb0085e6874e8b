// ops: self time and calls per aten op over the instrumented iterations
// (after the timed windows: the callback slows every op), grouped into
// classes (docs/metrics.md#ops).
//
// A global RecordFunction callback (no inputs) keeps a per-thread stack of
// open ops; an op's self time is its wall time minus that of the ops it
// called. One ops probe may be active in a process at a time. Self time is
// also summed per named layer, forward and backward apart
// (layer_attribution.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/record_function.h>

#include "tbd/measure/op_observer.h"
#include "tbd/measure/probe.h"

namespace tbd {

class LayerAttribution;

struct OpStats {
  int64_t calls = 0;
  double self_s = 0;
  double total_s = 0;  // including the ops it called
};

using OpTimes = OpTally<OpStats>;  // shared with the callbacks

class OpsProbe : public Probe {
 public:
  explicit OpsProbe(int top_n = 10);
  ~OpsProbe() override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_iteration_begin(bool measured) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // For tests without a runner: start/stop the callback, and the stats so far
  // keyed by "op|class".
  void start();
  void stop();
  void set_counting(bool on);
  std::map<std::string, OpStats> stats() const;
  std::map<std::string, OpStats> layer_stats() const;  // "layer|forward" / "layer|backward"

 private:
  std::shared_ptr<OpTimes> times_;
  at::CallbackHandle handle_ = 0;
  std::unique_ptr<LayerAttribution> layers_;  // while the callback runs
  std::map<std::string, OpStats> final_, final_layers_;
  int top_n_;
  int64_t iterations_ = 0;
  double seconds_ = 0;
};

}  // namespace tbd
