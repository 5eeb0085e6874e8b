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

#include <memory>
#include <string>

#include "tbd/measure/probes/op_observer.h"

namespace tbd {

struct RooflineStats {
  int64_t calls = 0;
  double seconds = 0;  // wall time of the unit, summed over calls
  double flops = 0;
  double bytes = 0;  // inputs read plus outputs written
};

// The judgement of one unit against the ceilings: {op, class, calls,
// seconds, flops, bytes, intensity, achieved_flops_per_s,
// achieved_bytes_per_s, compute_s, memory_s, overhead_s, bound,
// headroom_s}, per iteration. Ceilings: ceilings_for_run()'s document.
nlohmann::json judge_roofline_unit(const std::string& op, const std::string& cls, const RooflineStats& s,
                                   double iterations, const nlohmann::json& ceilings);

// stats(): keyed "op|class"; layer_stats(): "layer|op|class".
class RooflineProbe : public OpObserverProbe<OpTally<RooflineStats>> {
 public:
  void start() override;
  void on_run_start(const RunContext& ctx) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  nlohmann::json judged() const;
  nlohmann::json ceilings_;
};

}  // namespace tbd
