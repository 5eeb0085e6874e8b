#include "tbd/report/result_document.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tbd/core/error.h"
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

namespace {
using namespace fields::rules;

constexpr fields::FieldRule kResultRules[] = {
    {"schema", required(string)},
    {"created_utc", string},
    {"partial", boolean},
    {"workload", required(object)},
    {"workload.name", required(string)},
    {"workload.domain", string},
    {"workload.sample_unit", string},
    {"workload.variable_shapes", boolean},
    {"workload.settings", object},
    {"workload.configuration", object},
    {"workload.batch", object},
    {"workload.batch.micro_batch", positive_integer},
    {"workload.batch.grad_accum", positive_integer},
    {"workload.batch.ranks", positive_integer},
    {"workload.batch.global_batch", positive_integer},
    {"workload.batch.unit", string},
    {"workload.options", required(object)},
    {"workload.options.device", string},
    {"workload.options.precision", string},
    {"workload.options.scale", string},
    {"workload.options.data", string},
    {"workload.options.optimizer_impl", string},
    {"workload.options.host_allocator", string},
    {"workload.options.memory_format", string},
    {"workload.options.activation_checkpointing", string},
    {"workload.options.batch_size", required(positive_integer)},
    {"workload.options.grad_accum", positive_integer},
    {"workload.options.world_size", positive_integer},
    {"workload.options.repeat", positive_integer},
    {"workload.options.iters", positive_integer},
    {"workload.options.threads", integer},
    {"workload.options.seed", count},
    {"workload.options.settings", object},
    {"environment", object},
    {"environment.cpu", object},
    {"environment.memory", object},
    {"environment.os", object},
    {"environment.libtorch", object},
    {"environment.libtorch.version", string},
    {"environment.threads", object},
    {"environment.threads.intra_op", integer},
    {"environment.threads.inter_op", integer},
    {"environment.accelerator", object},
    {"environment.tbd", object},
    {"environment.tbd.version", string},
    {"environment.tbd.git_revision", string},
    {"framework", object},
    {"framework.cudnn_benchmark", boolean},
    {"wall_clock", object},
    {"wall_clock.start", integer},
    {"wall_clock.setup_end", integer},
    {"wall_clock.warmup_end", integer},
    {"wall_clock.end", integer},
    {"wall_clock.windows", array},
    {"wall_clock.windows[]", object},
    {"wall_clock.windows[].start", integer},
    {"wall_clock.windows[].end", integer},
    {"warmup", object},
    {"warmup.iterations", count},
    {"warmup.mode", string},
    {"batch_shapes", object},
    {"batch_shapes.declared", or_null(positive_integer)},
    {"batch_shapes.warmup", object},
    {"batch_shapes.warmup.*", positive_integer},
    {"batch_shapes.timed", object},
    {"batch_shapes.timed.*", positive_integer},
    {"batch_shapes.timed_iterations_first_seen", count},
    {"batch_shapes.warmup_cap_reached", boolean},
    {"model", object},
    {"model.parameters", count},
    {"model.trainable_parameters", count},
    {"model.wrapping_units", object},
    {"model.wrapping_units.count", count},
    {"model.wrapping_units.largest_unit_elements", count},
    {"model.wrapping_units.root_elements", count},
    {"model.wrapping_units.parameter_units", array},
    {"model.wrapping_units.parameter_units[]", integer},  // -1: outside every unit
    {"loss", object},
    {"loss.first_measured", or_null(number)},
    {"loss.last_measured", or_null(number)},
    {"throughput", required(object)},
    {"throughput.unit", string},
    {"throughput.samples", non_negative},
    {"throughput.seconds", non_negative},
    {"throughput.samples_per_s", or_null(positive)},  // null: no iteration completed
    {"throughput.ci95", or_null(array)},
    {"throughput.ci95[]", number},
    {"throughput.repetitions", array},
    {"throughput.repetitions[]", object},
    {"throughput.repetitions[].samples", non_negative},
    {"throughput.repetitions[].seconds", non_negative},
    {"throughput.repetitions[].iterations", count},
    {"throughput.repetitions[].samples_per_s", or_null(non_negative)},
    {"summary", object},
    {"summary.n", count},
    {"summary.mean_s", or_null(non_negative)},
    {"summary.median_s", or_null(non_negative)},
    {"summary.cv", or_null(non_negative)},
    {"iterations", required(array)},
    {"iterations[]", positive},  // seconds of a timed iteration
    {"iteration_samples", array},
    {"iteration_samples[]", non_negative},
    {"iteration_repetitions", array},
    {"iteration_repetitions[]", count},
    {"probes", array},
    {"probes[]", string},
    {"warnings", array},
    {"warnings[]", string},
    {"timing_conditions", object},
    {"distributed", object},
    {"distributed.world_size", positive_integer},
    {"distributed.backend", string},
    {"distributed.global_samples_per_s", non_negative},
    {"distributed.per_rank", array},
    {"distributed.sharding", object},
    {"distributed.sharding.strategy", string},
    {"distributed.sharding.model_state_bytes_per_rank.total", non_negative},
    {"*.not_available", string},  // why a section's figures are absent
    {"data", object},
    {"cpu", object},
    {"cpu.utilisation", or_null(non_negative)},
    {"flops", object},
    {"flops.achieved_flops_per_s", or_null(non_negative)},
    {"device_time", object},
    {"device_time.median_s", or_null(non_negative)},
    {"gpu", object},
    {"gpu.kernel_busy_share", or_null(non_negative)},
    {"energy", object},
    {"comm", object},
    {"memory", object},
    {"memory.peak_bytes", or_null(count)},
    {"memory.breakdown", object},
    {"memory.breakdown.*", non_negative},
    {"memory.cuda_allocator", object},
    {"memory.cuda_allocator.reserved_peak_bytes", or_null(count)},
    {"memory.cuda_allocator.fragmentation", or_null(number)},
    {"memory.timeline", object},
    {"memory.timeline.t_s", array},
    {"memory.timeline.t_s[]", number},
    {"memory.timeline.bytes", object},
    {"memory.timeline.bytes.*", array},
    {"memory.timeline.bytes.*[]", non_negative},
    {"phases", object},
    {"phases.iteration_ms", non_negative},
    {"phases.data_ms", non_negative},
    {"phases.forward_ms", non_negative},
    {"phases.backward_ms", non_negative},
    {"phases.communication_ms", non_negative},
    {"phases.optimizer_ms", non_negative},
    {"phases.other_ms", non_negative},
    {"ops", object},
    {"ops.iterations", count},
    {"ops.by_class", object},
    {"ops.by_class.*", object},
    {"ops.by_class.*.share_of_self", non_negative},
    {"ops.by_layer", array},
    {"ops.by_layer[]", object},
    {"ops.by_layer[].layer", string},
    {"ops.by_layer[].forward_self_s", non_negative},
    {"ops.by_layer[].backward_self_s", non_negative},
    {"ops.by_layer[].share_of_self", non_negative},
    {"roofline", object},
    {"roofline.verdicts_not_available", string},
    // The ceilings the verdicts used (findings read them): objects, as the probe writes them.
    {"roofline.ceilings", object},
    {"roofline.ceilings.compute", object},
    {"roofline.ceilings.memory_bandwidth", object},
    {"roofline.by_class", object},
    {"roofline.by_class.*", object},
    {"roofline.by_class.*.headroom_s", or_null(number)},
    {"roofline.by_class.*.seconds_by_bound", object},
    {"roofline.by_class.*.seconds_by_bound.*", number},
    {"roofline.by_op", array},
    {"roofline.by_op[]", object},
    {"roofline.by_op[].op", string},
    {"roofline.by_op[].bound", or_null(string)},  // null: no ceiling known (verdicts_not_available)
    {"roofline.by_op[].seconds", number},
    {"roofline.by_op[].headroom_s", or_null(number)},
    {"roofline.by_op[].intensity", or_null(number)},
    {"roofline.by_op[].achieved_flops_per_s", or_null(number)},
    {"roofline.by_layer", array},
    {"roofline.by_layer[]", object},
    {"roofline.by_layer[].layer", string},
    {"roofline.by_layer[].headroom_s", or_null(number)},
    {"roofline.by_layer[].seconds_by_bound", object},
    {"roofline.by_layer[].seconds_by_bound.*", number},
    {"gradients", object},
    {"gradients.iterations", count},
    {"gradients.elements", array},
    {"gradients.elements[]", count},
    {"gradients.element_size", array},
    {"gradients.element_size[]", positive_integer},
    {"gradients.kind", array},
    {"gradients.kind[]", string},
    {"gradients.sparse", array},
    {"gradients.sparse[]", or_null(object)},  // null: a dense gradient
    {"gradients.sparse[].rows", required(positive_integer)},
    {"gradients.sparse[].entries", required(non_negative)},
    {"gradients.backward_passes", array},
    {"gradients.backward_passes[]", object},
    {"gradients.backward_passes[].share_of_backward", non_negative},
    {"gradients.backward_passes[].ready_fraction", required(array)},
    {"gradients.backward_passes[].ready_fraction[]", or_null(non_negative)},  // null: no gradient in that pass
};

// `field`, where present, must hold one entry per entry of `reference`.
void expect_same_length(const nlohmann::json& doc, fields::Path field, const std::string& field_name,
                        size_t reference_size, const std::string& reference_name, const std::string& file) {
  const auto* f = fields::find(doc, field);
  if (f && f->is_array() && f->size() != reference_size)
    fields::refuse(file, field_name,
                   "an array of one entry per entry of '" + reference_name + "' (" + std::to_string(reference_size) +
                       "), but it holds " + std::to_string(f->size()),
                   nullptr);
}

}  // namespace

std::span<const fields::FieldRule> result_rules() { return kResultRules; }

void check_result_document(const nlohmann::json& r, const std::string& file) {
  if (!r.is_object()) throw Error(file + ": a result must be a JSON object, found " + r.type_name());
  fields::check_fields(r, kResultRules, file);
  const auto& iterations = fields::array(r, {"iterations"});
  if (iterations.empty() && !fields::boolean(r, {"partial"}).value_or(false))
    fields::refuse(file, "iterations",
                   "a non-empty array (only a partial result, cut short before its first timed iteration, has none)",
                   &iterations);
  expect_same_length(r, {"iteration_samples"}, "iteration_samples", iterations.size(), "iterations", file);
  expect_same_length(r, {"iteration_repetitions"}, "iteration_repetitions", iterations.size(), "iterations", file);
  // The data-parallel prediction walks these lists together, one entry per parameter.
  const auto& g = fields::object(r, {"gradients"});
  if (fields::find(g, {"backward_passes"})) {
    for (const char* list : {"elements", "element_size", "kind"})
      if (!fields::find(g, {list})) fields::refuse(file, std::string("gradients.") + list, "an array", nullptr);
    const size_t n = fields::array(g, {"elements"}).size();
    expect_same_length(g, {"element_size"}, "gradients.element_size", n, "gradients.elements", file);
    expect_same_length(g, {"kind"}, "gradients.kind", n, "gradients.elements", file);
    expect_same_length(g, {"sparse"}, "gradients.sparse", n, "gradients.elements", file);
    expect_same_length(r, {"model", "wrapping_units", "parameter_units"}, "model.wrapping_units.parameter_units", n,
                       "gradients.elements", file);
    const auto& passes = fields::array(g, {"backward_passes"});
    for (size_t k = 0; k < passes.size(); ++k)
      expect_same_length(passes[k], {"ready_fraction"},
                         "gradients.backward_passes[" + std::to_string(k) + "].ready_fraction", n, "gradients.elements",
                         file);
  }
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
