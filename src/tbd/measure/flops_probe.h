// flops: FLOPs per iteration by phase, per sample, achieved FLOP/s and
// utilisation against the measured and datasheet peaks (docs/metrics.md#flops).
// An analysis probe: FLOPs are counted in the instrumented iterations after
// the timed windows; achieved FLOP/s = FLOPs per sample × the timed windows'
// samples per second, so the counting callback never slows a timed step.
//
// A global RecordFunction callback with input shapes sees every aten op on
// every thread (autograd and worker threads included). Each op is costed by
// flop_rules at exactly one level of the op tree: the outermost op with a
// rule on that thread; ops nested inside it (conv2d → convolution →
// mkldnn_convolution) are not counted again. One flops probe may be active
// in a process at a time.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/record_function.h>

#include "tbd/measure/probe.h"

namespace tbd {

// The counting state the callbacks write to; safe from any thread.
struct FlopTally {
  // By phase_index(), then kOutsidePhases for ops outside any phase.
  static constexpr int kBuckets = kPhaseCount + 1;
  std::atomic<double> flops[kBuckets]{};
  std::atomic<double> bytes[kBuckets]{};
  std::atomic<int> phase{kOutsidePhases};  // the bucket ops count into now
  std::atomic<bool> counting{false};
  std::mutex by_op_mutex;
  std::map<std::string, double> by_op;  // FLOPs per op name
};

// Counts FLOPs of the ops run on any thread while alive and `counting`.
// Used by the probe and directly by tests.
class FlopCounter {
 public:
  FlopCounter();
  ~FlopCounter();
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;
  FlopTally& tally() { return *tally_; }
  double flops(int bucket) const { return tally_->flops[bucket].load(); }
  double total_flops() const;

 private:
  std::unique_ptr<FlopTally> tally_;
  at::CallbackHandle handle_ = 0;
};

class FlopsProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_timed_figures(const TimedFigures& timed) override { timed_ = timed; }
  void on_iteration_begin(bool measured) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  double achieved() const;  // FLOP/s of the timed windows; 0 when unknown
  std::unique_ptr<FlopCounter> counter_;
  double totals_[FlopTally::kBuckets] = {};
  double bytes_[FlopTally::kBuckets] = {};
  std::map<std::string, double> by_op_;
  int64_t iterations_ = 0;
  double samples_ = 0, seconds_ = 0;  // of the instrumented iterations
  TimedFigures timed_;                // of the timed windows: what rates divide by
  std::string unit_, dtype_;
  nlohmann::json peaks_;
};

}  // namespace tbd
