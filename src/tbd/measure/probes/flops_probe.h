// flops: FLOPs per iteration by phase, per sample, achieved FLOP/s and
// utilisation against the measured and datasheet peaks (docs/metrics.md#flops).
// An analysis probe: FLOPs are counted in the instrumented iterations after
// the timed windows; achieved FLOP/s = FLOPs per sample × the timed windows'
// samples per second, so the counting callback never slows a timed step.
//
// The callback (op_observer.h, with input shapes) sees every aten op on
// every thread (autograd and worker threads included). Each op is costed by
// flop_rules at exactly one level of the op tree: the outermost op with a
// rule on that thread; ops nested inside it (conv2d → convolution →
// mkldnn_convolution) are not counted again.
//
// Activation checkpointing re-runs forwards inside backward; ops counted
// while the thread is inside such a recomputation (core/recomputation.h)
// are also tallied apart, so the probe reports hardware FLOPs (everything
// counted: what the device executed, HFU) and model FLOPs (without the
// recomputation: what the model needs, MFU; MLPerf's utilisation appendix).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "tbd/measure/probes/op_observer.h"

namespace tbd {

// What the callbacks count into, by phase_index(), then kOutsidePhases for
// ops outside any phase.
struct FlopTally : ObserverState {
  static constexpr std::size_t kBuckets = kPhaseCount + 1;
  std::atomic<double> flops[kBuckets]{};
  std::atomic<double> bytes[kBuckets]{};
  std::atomic<double> recomputed{0};    // of the above, counted inside activation recomputation (all in backward)
  std::map<std::string, double> by_op;  // FLOPs per op name
};

// stats(): FLOPs per op name.
class FlopsProbe : public OpObserverProbe<FlopTally> {
 public:
  void start() override;
  void on_run_start(const RunContext& ctx) override;
  void on_timed_figures(const TimedFigures& timed) override { timed_ = timed; }
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // What was counted so far, by bucket (phase_index() or kOutsidePhases).
  double flops(std::size_t bucket) const { return observer_.tally().flops[bucket].load(); }
  double bytes(std::size_t bucket) const { return observer_.tally().bytes[bucket].load(); }
  double total_flops() const;  // hardware FLOPs: everything counted, recomputation included
  double recomputed_flops() const { return observer_.tally().recomputed.load(); }
  double model_flops() const { return total_flops() - recomputed_flops(); }

 private:
  // FLOP/s of the timed windows for `flops` counted FLOPs; 0 when unknown.
  double achieved(double flops) const;
  TimedFigures timed_;  // of the timed windows: what rates divide by
  std::string unit_, dtype_;
  nlohmann::json peaks_;
};

}  // namespace tbd
