// roofline: each operator's FLOPs, bytes moved and time in the instrumented
// iterations, judged against the machine's ceilings (ceilings.h): the GEMM
// peak, the memory bandwidth and the per-operator dispatch floor
// (docs/metrics.md#roofline). Williams, Waterman and Patterson's roofline
// (CACM 2009) with the dispatch floor as a third ceiling.
//
// The units judged: an operator with a FLOP rule (flop_rules.h; conv2d,
// linear, mm, ...) counts as a whole, its time including what it called and
// its bytes its inputs and outputs; operators outside those that call no
// other operator count on their own (elementwise, reductions, copies, the
// optimizer's kernels). Views move nothing.
//
// Per named layer (layer_attribution.h): the same units, judged one by one,
// summed into the layer with their time by bound and their headroom.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/record_function.h>

#include "tbd/measure/op_observer.h"
#include "tbd/measure/probe.h"

namespace tbd {

class LayerAttribution;

struct RooflineStats {
  int64_t calls = 0;
  double seconds = 0;  // wall time of the unit, summed over calls
  double flops = 0;
  double bytes = 0;  // inputs read plus outputs written
};

using RooflineTally = OpTally<RooflineStats>;  // shared with the callbacks

// The judgement of one unit against the ceilings: {op, class, calls,
// seconds, flops, bytes, intensity, achieved_flops_per_s,
// achieved_bytes_per_s, compute_s, memory_s, overhead_s, bound,
// headroom_s}, per iteration. Ceilings: ceilings_for_run()'s document.
nlohmann::json judge_roofline_unit(const std::string& op, const std::string& cls, const RooflineStats& s,
                                   double iterations, const nlohmann::json& ceilings);

class RooflineProbe : public Probe {
 public:
  RooflineProbe();
  ~RooflineProbe() override;
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_iteration_begin(bool measured) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // For tests without a runner: the ceilings to judge by, the callback, and
  // the units so far keyed by "op|class".
  void set_ceilings(nlohmann::json ceilings) { ceilings_ = std::move(ceilings); }
  void start();
  void stop();
  void set_counting(bool on);
  void count_iteration() { ++iterations_; }
  std::map<std::string, RooflineStats> stats() const;
  std::map<std::string, RooflineStats> layer_stats() const;  // "layer|op|class"

 private:
  nlohmann::json judged() const;
  std::shared_ptr<RooflineTally> tally_;
  at::CallbackHandle handle_ = 0;
  std::unique_ptr<LayerAttribution> layers_;  // while the callback runs
  // by_layer keys: "layer|op|class".
  std::map<std::string, RooflineStats> final_, final_layers_;
  nlohmann::json ceilings_;
  int64_t iterations_ = 0;
};

}  // namespace tbd
