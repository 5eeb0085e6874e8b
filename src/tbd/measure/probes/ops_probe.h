// ops: self time and calls per aten op over the instrumented iterations
// (after the timed windows: the callback slows every op), grouped into
// classes (docs/metrics.md#ops).
//
// The callback (op_observer.h; no inputs) keeps a per-thread stack of open
// ops; an op's self time is its wall time minus that of the ops it called.
// Self time is also summed per named layer, forward and backward apart
// (layer_attribution.h).
#pragma once

#include <memory>
#include <string>

#include "tbd/measure/probes/op_observer.h"

namespace tbd {

struct OpStats {
  int64_t calls = 0;
  double self_s = 0;
  double total_s = 0;  // including the ops it called
};

// stats(): keyed "op|class"; layer_stats(): "layer|forward" / "layer|backward".
class OpsProbe : public OpObserverProbe<OpTally<OpStats>> {
 public:
  explicit OpsProbe(int top_n = 10) : top_n_(top_n) {}
  void start() override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  int top_n_;
};

}  // namespace tbd
