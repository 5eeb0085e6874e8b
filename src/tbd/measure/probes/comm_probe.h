// comm: gradient all-reduce of data-parallel runs, per measured iteration
// (docs/metrics.md#comm). Not available in single-process runs.
#pragma once

#include <vector>

#include "tbd/measure/probes/probe.h"

namespace tbd {

struct CommIteration;

// One synchronisation's figures, from the reducer's events.
struct CommFigures {
  double bytes = 0;  // gradient bytes all-reduced
  int buckets = 0;
  double busy_s = 0;                                 // union of the buckets' in-flight intervals
  double hidden_s = 0;                               // part of it while backward was still computing
  double exposed_wait_s = 0;                         // time the step blocked after backward's computation
  std::vector<double> bucket_seconds, bucket_bytes;  // per bucket: all-reduce time, bytes
};
CommFigures analyse_synchronisation(const CommIteration& it);

class CommProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_iteration_end(const IterationRecord& r) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  GradientReducer* reducer_ = nullptr;
  bool sharded_ = false;  // --sharding: the collectives are the sharded path's, not the reducer's
  int world_ = 1;
  bool overlap_ = true;
  std::vector<double> busy_s_, hidden_s_, exposed_s_, busbw_, bytes_;
  std::vector<int> buckets_;
  // Per measured iteration: synchronisations (ends of a reducing backward)
  // and collectives launched (bucket all-reduces and sparse exchanges).
  std::vector<double> synchronisations_, collectives_;
};

}  // namespace tbd
