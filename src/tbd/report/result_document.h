// A tbd.result/1 document read into the types the report shows: the
// figures of the run and of each probe that ran. Fields that are missing or
// of another type read as absent (NaN, -1, empty), the way a probe that did
// not run reads, never as an error. check_result_document, which every
// command runs on a result it loads, refuses such a document first.
#pragma once

#include <span>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/json_fields.h"

namespace tbd {

// A run's roofline (roofline probe with measured ceilings): the units with
// FLOPs as points, the ceilings, the operator time by bound and where the
// most time lies above a ceiling.
struct RooflinePoint {
  std::string op;
  double intensity = 0, flops_per_s = 0, seconds = 0;
};
struct RooflineView {
  bool judged = false;
  double peak_flops_per_s = 0, bandwidth_bytes_per_s = 0;
  std::vector<RooflinePoint> points;
  double compute_s = 0, memory_s = 0, overhead_s = 0;  // operator time per iteration by bound
  std::string top_op, top_bound;                       // the unit with the most headroom
  double top_headroom_s = 0;
};

// A named layer's operator self time per iteration (ops probe) and, with
// the roofline probe, the bound most of its time has and its headroom.
struct LayerTime {
  std::string layer;
  double forward_ms = 0, backward_ms = 0, share = 0;
  std::string bound;       // empty: no roofline verdicts
  double headroom_ms = 0;  // NaN: no roofline verdicts
};

// The memory probe's timeline: live bytes by category (memory_categories()
// order) at each recorded point of the instrumented iterations.
struct MemoryTimeline {
  std::vector<double> t_s;
  std::vector<std::vector<double>> bytes;  // [category][point]
};

// The machine a run records (environment); a part is absent where not recorded.
struct RunMachine {
  bool recorded = false;  // the result has an environment at all
  std::optional<std::string> cpu_model, cores_available, libtorch, hostname;
};

struct ResultDocument {
  std::string workload, unit, device = "cpu";
  long long batch = 0;
  double throughput = 0, median_s = 0, cv = 0, cpu = 0, flops = 0;  // NaN where a probe did not run
  double ci_low = 0, ci_high = 0;  // the throughput's 95% CI over repetitions; NaN without one
  long long peak_bytes = -1;
  bool partial = false;
  std::vector<double> times;
  std::vector<std::pair<std::string, long long>> memory;   // category, bytes at the peak (empty: no memory probe)
  std::vector<std::pair<std::string, double>> op_classes;  // class, share of operator self time (empty: no ops probe)
  std::vector<std::pair<std::string, double>> phases_ms;   // phase, ms per iteration (empty: not recorded)
  RooflineView roofline;                                   // judged: false without the probe or its ceilings
  std::vector<LayerTime> layers;                           // as recorded (largest first); empty: no ops probe
  MemoryTimeline memory_timeline;                          // empty: no memory probe
  // CUDA runs (NaN / -1 where not measured): achieved FLOP/s, NVML
  // utilisation, Kineto kernel-busy share, CUDA-event iteration time, the
  // caching allocator's reserved peak and fragmentation.
  bool on_gpu = false;
  double achieved_flops = 0, gpu_util = 0, kernel_busy = 0, device_median_s = 0, fragmentation = 0;
  long long reserved_bytes = -1;
  RunMachine machine;
};

ResultDocument read_result_document(const nlohmann::json& result);

// The rules of a tbd.result/1 document (docs/schema/tbd.result-1.schema.json)
// for the fields tbd's commands read: types, ranges, and what may be null.
std::span<const fields::FieldRule> result_rules();

// Throws Error naming `file`, the field and the rule where `result` breaks
// result_rules() or a rule between fields: iteration_samples and
// iteration_repetitions hold one entry per iteration, iterations is empty
// only in a partial result, the gradients' lists have one entry per parameter.
void check_result_document(const nlohmann::json& result, const std::string& file);

// The phases of a result's `phases` section, in the order an iteration runs them.
const std::vector<std::string>& report_phases();  // data, forward, backward, communication, optimizer, other

// The memory categories in the order of DESIGN.md (bottom to top of a stacked bar).
const std::vector<std::string>& memory_categories();

}  // namespace tbd
