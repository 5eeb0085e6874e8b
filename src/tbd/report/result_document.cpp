#include "tbd/report/result_document.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tbd/report/findings.h"
#include "tbd/report/json_fields.h"
#include "tbd/report/result_set.h"

namespace tbd {
namespace {
using fields::number_or_nan;

// A section a probe wrote, or an empty object when it is absent or not an object.
const nlohmann::json& probe_section(const nlohmann::json& r, const char* probe) { return fields::object(r, {probe}); }

// The roofline section of a result, when its operators were judged.
RooflineView roofline_view(const nlohmann::json& r) {
  RooflineView v;
  const auto& rf = probe_section(r, "roofline");
  if (!fields::find(rf, {"by_op"}) || fields::find(rf, {"verdicts_not_available"})) return v;
  v.peak_flops_per_s = number_or_nan(rf, {"ceilings", "compute", "flops_per_s"});
  v.bandwidth_bytes_per_s = number_or_nan(rf, {"ceilings", "memory_bandwidth", "bytes_per_s"});
  if (!std::isfinite(v.peak_flops_per_s) || !std::isfinite(v.bandwidth_bytes_per_s)) return v;
  for (const auto& u : fields::array(rf, {"by_op"})) {
    const auto bound = fields::string(u, {"bound"});
    if (!bound) continue;
    const double seconds = number_or_nan(u, {"seconds"});
    (*bound == "compute" ? v.compute_s : *bound == "memory" ? v.memory_s : v.overhead_s) += seconds;
    const std::string op = fields::string(u, {"op"}).value_or("");
    const double headroom = number_or_nan(u, {"headroom_s"});
    if (std::isfinite(headroom) && headroom > v.top_headroom_s)
      v.top_headroom_s = headroom, v.top_op = op, v.top_bound = *bound;
    const double intensity = fields::number(u, {"intensity"}).value_or(0);
    const double rate = number_or_nan(u, {"achieved_flops_per_s"});
    if (intensity > 0 && rate > 0) v.points.push_back({op, intensity, rate, seconds});
  }
  v.judged = true;
  return v;
}

// The ops probe's per-layer self time, per iteration, with the roofline
// probe's bound (the one most of the layer's time has) and headroom.
std::vector<LayerTime> layers_of(const nlohmann::json& r) {
  std::vector<LayerTime> layers;
  const auto& ops = probe_section(r, "ops");
  if (!fields::find(ops, {"by_layer"})) return layers;
  const double n = std::max(1.0, fields::number(ops, {"iterations"}).value_or(1.0));
  std::map<std::string, const nlohmann::json*> judged;
  const auto& rf = probe_section(r, "roofline");
  if (!fields::find(rf, {"verdicts_not_available"}))
    for (const auto& l : fields::array(rf, {"by_layer"})) judged[fields::string(l, {"layer"}).value_or("")] = &l;
  for (const auto& l : fields::array(ops, {"by_layer"})) {
    LayerTime t;
    t.layer = fields::string(l, {"layer"}).value_or("?");
    t.forward_ms = 1e3 * number_or_nan(l, {"forward_self_s"}) / n;
    t.backward_ms = 1e3 * number_or_nan(l, {"backward_self_s"}) / n;
    t.share = number_or_nan(l, {"share_of_self"});
    t.headroom_ms = NAN;
    if (const auto it = judged.find(t.layer); it != judged.end()) {
      t.bound = dominant_bound(fields::object(*it->second, {"seconds_by_bound"})).first;
      t.headroom_ms = 1e3 * number_or_nan(*it->second, {"headroom_s"});
    }
    layers.push_back(t);
  }
  return layers;
}

MemoryTimeline memory_timeline_of(const nlohmann::json& r) {
  MemoryTimeline t;
  const auto& tl = fields::object(r, {"memory", "timeline"});
  if (!fields::find(tl, {"t_s"}) || !fields::find(tl, {"bytes"})) return t;
  for (const auto& v : fields::array(tl, {"t_s"})) t.t_s.push_back(v.is_number() ? v.get<double>() : NAN);
  for (const auto& c : memory_categories()) {
    std::vector<double> series(t.t_s.size(), 0.0);
    const auto& recorded = fields::array(tl, {"bytes", c.c_str()});
    for (size_t i = 0; i < series.size() && i < recorded.size(); ++i)
      series[i] = recorded[i].is_number() ? recorded[i].get<double>() : 0.0;
    t.bytes.push_back(series);
  }
  return t;
}

RunMachine machine_of(const nlohmann::json& r) {
  RunMachine m;
  m.recorded = fields::find(r, {"environment"}) != nullptr;
  m.cpu_model = fields::text(r, {"environment", "cpu", "model"});
  m.cores_available = fields::text(r, {"environment", "cpu", "cores_available_to_process"});
  m.libtorch = fields::text(r, {"environment", "libtorch", "version"});
  m.hostname = fields::text(r, {"environment", "os", "hostname"});
  return m;
}

}  // namespace

const std::vector<std::string>& memory_categories() {
  static const std::vector<std::string> c = {"weights",      "weight_gradients", "optimizer_state", "inputs",
                                             "feature_maps", "workspace",        "dynamic",         "other"};
  return c;
}

const std::vector<std::string>& report_phases() {
  static const std::vector<std::string> p = {"data", "forward", "backward", "communication", "optimizer", "other"};
  return p;
}

ResultDocument read_result_document(const nlohmann::json& r) {
  ResultDocument d;
  d.workload = fields::string(r, {"workload", "name"}).value_or("?");
  d.unit = throughput_unit(r);
  d.batch = fields::integer(r, {"workload", "options", "batch_size"}).value_or(0);
  d.device = fields::string(r, {"workload", "options", "device"}).value_or("cpu");
  d.on_gpu = d.device.rfind("cuda", 0) == 0;
  d.throughput = throughput_of(r);
  d.median_s = median_iteration_s(r);
  d.cv = number_or_nan(r, {"summary", "cv"});
  d.ci_low = d.ci_high = NAN;
  const auto& ci = fields::array(r, {"throughput", "ci95"});
  if (ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
    // The CI of rank 0's throughput; a distributed run's global figure scales with it.
    const double scale = d.throughput / fields::number(r, {"throughput", "samples_per_s"}).value_or(d.throughput);
    d.ci_low = scale * ci[0].get<double>();
    d.ci_high = scale * ci[1].get<double>();
  }
  d.cpu = cpu_utilisation(r);
  d.flops = flops_utilisation(r);
  d.peak_bytes = peak_memory_bytes(r);
  d.partial = fields::boolean(r, {"partial"}).value_or(false);
  d.times = iteration_times(r);
  d.achieved_flops = number_or_nan(r, {"flops", "achieved_flops_per_s"});
  d.gpu_util = number_or_nan(r, {"gpu", "utilization_gpu", "mean"});
  d.kernel_busy = number_or_nan(r, {"gpu", "kernel_busy_share"});
  d.device_median_s = number_or_nan(r, {"device_time", "median_s"});
  d.reserved_bytes = fields::integer(r, {"memory", "cuda_allocator", "reserved_peak_bytes"}).value_or(-1);
  d.fragmentation = number_or_nan(r, {"memory", "cuda_allocator", "fragmentation"});
  if (d.peak_bytes > 0 && fields::find(r, {"memory", "breakdown"}))
    for (const auto& c : memory_categories())
      d.memory.push_back({c, fields::integer(r, {"memory", "breakdown", c.c_str()}).value_or(0)});
  for (const auto& [cls, v] : fields::object(r, {"ops", "by_class"}).items())
    d.op_classes.push_back({cls, number_or_nan(v, {"share_of_self"})});
  if (fields::find(probe_section(r, "phases"), {"iteration_ms"}))
    for (const auto& p : report_phases()) d.phases_ms.push_back({p, number_or_nan(r, {"phases", (p + "_ms").c_str()})});
  d.roofline = roofline_view(r);
  d.layers = layers_of(r);
  d.memory_timeline = memory_timeline_of(r);
  d.machine = machine_of(r);
  return d;
}

}  // namespace tbd
