#include "tbd/measure/probes/roofline_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "tbd/core/options.h"
#include "tbd/measure/machine/ceilings.h"
#include "tbd/measure/ops/flop_rules.h"
#include "tbd/measure/ops/layer_attribution.h"
#include "tbd/measure/ops/op_classes.h"

namespace tbd {

namespace {

// Bytes of a tensor's elements (a sparse tensor: its values and indices).
double tensor_bytes(const at::Tensor& t) {
  if (!t.defined()) return 0;
  if (t.is_sparse()) {
    // _values() and _indices() are operators: called from inside the observer
    // they would be observed too, and recurse (dlrm's sparse embedding gradients).
    const at::RecordFunctionGuard not_observed(false);
    return static_cast<double>(t._values().numel() * t._values().element_size() +
                               t._indices().numel() * t._indices().element_size());
  }
  return static_cast<double>(t.numel()) * static_cast<double>(t.element_size());
}

const void* storage_of(const at::Tensor& t) { return t.defined() && t.has_storage() ? t.storage().data() : nullptr; }

// Calls f on every tensor in a list of boxed values (tensors, tensor lists, optional tensors).
template <class F>
void for_each_tensor(c10::ArrayRef<c10::IValue> values, const F& f) {
  for (const auto& v : values) {
    if (v.isTensor()) {
      f(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) f(t);
    } else if (v.isList()) {
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor()) f(e.toTensor());
    }
  }
}

// Writing without reading the target: its old contents are not read.
bool overwrites_self(std::string_view op) { return op == "aten::copy_" || op == "aten::fill_" || op == "aten::zero_"; }

using RooflineTally = OpTally<RooflineStats>;

struct RooflineFrame : OpFrame {
  bool inside_unit = false;  // an ancestor is a FLOP-rule unit: this op is part of it
  bool unit = false;         // this op has a FLOP rule and no unit above it
  bool has_children = false;
  double flops = 0, bytes_in = 0;
  std::vector<const void*> input_storages;
};
thread_local OpStack<RooflineFrame> t_roofline_open;

std::unique_ptr<at::ObserverContext> roofline_on_start(const at::RecordFunction& fn, RooflineTally* tally) {
  auto f = OpStack<RooflineFrame>::make(fn, tally);
  if (RooflineFrame* caller = t_roofline_open.top()) {
    caller->has_children = true;
    f->inside_unit = caller->inside_unit || caller->unit;
  }
  if (!f->inside_unit && tally && tally->counting.load(std::memory_order_relaxed)) {
    const char* name = fn.name();
    const auto inputs = fn.inputs();
    f->unit = has_flop_rule(name);
    if (f->unit) f->flops = flop_cost(name, inputs).flops;
    const bool skip_self = overwrites_self(name);
    bool first = true;
    for_each_tensor(inputs, [&](const at::Tensor& t) {
      if (!(first && skip_self)) f->bytes_in += tensor_bytes(t);
      first = false;
      if (const void* s = storage_of(t)) f->input_storages.push_back(s);
    });
  }
  return t_roofline_open.open(std::move(f));
}

void roofline_on_end(const at::RecordFunction& fn, at::ObserverContext* ctx, RooflineTally* tally) {
  const double end = steady_seconds();
  RooflineFrame* f = t_roofline_open.close(ctx);
  if (!f) return;
  if (!tally || !tally->counting.load(std::memory_order_relaxed) || f->inside_unit) return;
  if (!f->unit && f->has_children) return;  // a composite: its operators count on their own
  const std::string name = fn.name();
  const bool in_place = !name.empty() && name.back() == '_';
  double bytes_out = 0;
  bool view = false;
  for_each_tensor(fn.outputs(), [&](const at::Tensor& t) {
    const void* s = storage_of(t);
    if (!in_place && s && std::find(f->input_storages.begin(), f->input_storages.end(), s) != f->input_storages.end())
      view = true;  // an output sharing an input's memory: a view, nothing moved
    bytes_out += tensor_bytes(t);
  });
  const std::string key = name + "|" + op_class(name, f->optimizer);
  const double bytes = !view || f->unit ? f->bytes_in + bytes_out : 0.0;
  std::lock_guard<std::mutex> lock(tally->mutex);
  for (RooflineStats* s : {&tally->by_op[key], &tally->by_layer[layer_name(f->layer.layer) + "|" + key]}) {
    ++s->calls;
    s->seconds += end - f->start;
    s->flops += f->flops;
    s->bytes += bytes;
  }
}

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

}  // namespace

nlohmann::json judge_roofline_unit(const std::string& op, const std::string& cls, const RooflineStats& s,
                                   double iterations, const nlohmann::json& ceilings) {
  const double n = std::max(iterations, 1.0);
  const double peak = number_or(ceilings.value("compute", nlohmann::json()), "flops_per_s", 0);
  const double bandwidth = number_or(ceilings.value("memory_bandwidth", nlohmann::json()), "bytes_per_s", 0);
  const double floor = number_or(ceilings.value("dispatch_overhead", nlohmann::json()), "seconds_per_op", 0);
  nlohmann::json u = {{"op", op},
                      {"class", cls},
                      {"calls", static_cast<double>(s.calls) / n},
                      {"seconds", s.seconds / n},
                      {"flops", s.flops / n},
                      {"bytes", s.bytes / n},
                      {"intensity", s.bytes > 0 ? nlohmann::json(s.flops / s.bytes) : nlohmann::json(nullptr)},
                      {"achieved_flops_per_s", s.seconds > 0 ? s.flops / s.seconds : 0.0},
                      {"achieved_bytes_per_s", s.seconds > 0 ? s.bytes / s.seconds : 0.0}};
  // The least time each ceiling allows; the largest of them is the bound.
  const double compute_s = s.flops > 0 ? (peak > 0 ? s.flops / peak / n : NAN) : 0.0;
  const double memory_s = bandwidth > 0 ? s.bytes / bandwidth / n : NAN;
  const double overhead_s = floor > 0 ? static_cast<double>(s.calls) * floor / n : NAN;
  u["compute_s"] = std::isnan(compute_s) ? nlohmann::json(nullptr) : nlohmann::json(compute_s);
  u["memory_s"] = std::isnan(memory_s) ? nlohmann::json(nullptr) : nlohmann::json(memory_s);
  u["overhead_s"] = std::isnan(overhead_s) ? nlohmann::json(nullptr) : nlohmann::json(overhead_s);
  if (std::isnan(compute_s) || std::isnan(memory_s) || std::isnan(overhead_s)) {
    u["bound"] = nullptr;
    u["headroom_s"] = nullptr;
    return u;
  }
  const double ideal = std::max({compute_s, memory_s, overhead_s});
  u["bound"] = ideal == compute_s && compute_s > 0 ? "compute"
               : ideal == memory_s && memory_s > 0 ? "memory"
                                                   : "overhead";
  u["attainable_s"] = ideal;
  u["headroom_s"] = std::max(0.0, s.seconds / n - ideal);
  return u;
}

void RooflineProbe::start() {
  observer_.start<roofline_on_start, roofline_on_end>({.inputs = true, .outputs = true, .layers = true},
                                                      "roofline probe");
}

void RooflineProbe::on_run_start(const RunContext& ctx) {
  ceilings_ = ceilings_for_run(ctx.device, ctx.options.threads, to_string(ctx.options.precision));
}

nlohmann::json RooflineProbe::judged() const {
  const auto units = stats();
  const double n = static_cast<double>(iterations_);
  nlohmann::json ops = nlohmann::json::array();
  std::map<std::string, RooflineStats> classes;
  for (const auto& [key, s] : units) {
    auto [op, cls] = split_op_key(key);
    ops.push_back(judge_roofline_unit(op, cls, s, n, ceilings_));
    RooflineStats& c = classes[cls];
    c.calls += s.calls, c.seconds += s.seconds, c.flops += s.flops, c.bytes += s.bytes;
  }
  // Where optimisation pays: the most time above the ceilings first.
  std::sort(ops.begin(), ops.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return number_or(a, "headroom_s", -1) != number_or(b, "headroom_s", -1)
               ? number_or(a, "headroom_s", -1) > number_or(b, "headroom_s", -1)
               : a["seconds"].get<double>() > b["seconds"].get<double>();
  });
  // A class as one unit would hide its mix of bounds: its time by each op's bound.
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& [cls, c] : classes) {
    nlohmann::json row = judge_roofline_unit(cls, cls, c, n, ceilings_);
    row.erase("op");
    nlohmann::json by_bound = {{"compute", 0.0}, {"memory", 0.0}, {"overhead", 0.0}};
    double headroom = 0;
    for (const auto& u : ops)
      if (u["class"] == cls && u["bound"].is_string()) {
        by_bound[u["bound"].get<std::string>()] =
            by_bound[u["bound"].get<std::string>()].get<double>() + u["seconds"].get<double>();
        headroom += u["headroom_s"].get<double>();
      }
    row["seconds_by_bound"] = by_bound;
    row["headroom_s"] = headroom;  // the sum of its operators' headroom
    row.erase("bound");
    by_class[cls] = row;
  }
  // Per named layer: its operators judged one by one (as a class's), summed.
  const auto layer_units = layer_stats();
  std::map<std::string, RooflineStats> layer_totals;
  std::map<std::string, nlohmann::json> layer_bounds;
  std::map<std::string, double> layer_headroom;
  for (const auto& [key, s] : layer_units) {
    const auto bar = key.find('|');
    const std::string layer = key.substr(0, bar);
    auto [op, cls] = split_op_key(key.substr(bar + 1));
    RooflineStats& t = layer_totals[layer];
    t.calls += s.calls, t.seconds += s.seconds, t.flops += s.flops, t.bytes += s.bytes;
    const nlohmann::json u = judge_roofline_unit(op, cls, s, n, ceilings_);
    auto& by_bound = layer_bounds[layer];
    if (by_bound.is_null()) by_bound = {{"compute", 0.0}, {"memory", 0.0}, {"overhead", 0.0}};
    if (u["bound"].is_string()) {
      by_bound[u["bound"].get<std::string>()] =
          by_bound[u["bound"].get<std::string>()].get<double>() + u["seconds"].get<double>();
      layer_headroom[layer] += u["headroom_s"].get<double>();
    }
  }
  nlohmann::json by_layer = nlohmann::json::array();
  for (const auto& [layer, t] : layer_totals) {
    nlohmann::json row = judge_roofline_unit(layer, "", t, n, ceilings_);
    row.erase("op");
    row.erase("class");
    row.erase("bound");
    row["layer"] = layer;
    row["seconds_by_bound"] = layer_bounds[layer];
    row["headroom_s"] = layer_headroom[layer];
    by_layer.push_back(row);
  }
  std::sort(by_layer.begin(), by_layer.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    if ((a["layer"] == kNoLayer) != (b["layer"] == kNoLayer)) return b["layer"] == kNoLayer;
    return a["seconds"].get<double>() > b["seconds"].get<double>();
  });
  return {{"ops", ops}, {"by_class", by_class}, {"by_layer", by_layer}};
}

void RooflineProbe::contribute(nlohmann::json& result) const {
  nlohmann::json r;
  r["unit"] = "per instrumented iteration: s, FLOPs, bytes; rates per s";
  r["iterations"] = iterations_;
  r["ceilings"] = ceilings_;
  r["definition"] =
      "units: operators with a FLOP rule as a whole (time with their callees; bytes: their inputs and outputs) "
      "and operators that call no other; compute_s = flops / peak, memory_s = bytes / bandwidth, overhead_s = "
      "calls x dispatch floor; bound: the largest of the three; headroom_s = seconds - that largest "
      "(docs/metrics.md#roofline)";
  if (iterations_ == 0) {
    r["not_available"] = "no instrumented iteration completed";
    result["roofline"] = r;
    return;
  }
  bool judged_all = true;
  for (const char* c : {"compute", "memory_bandwidth", "dispatch_overhead"})
    if (!ceilings_.contains(c) || ceilings_[c].contains("not_available")) judged_all = false;
  if (!judged_all)
    r["verdicts_not_available"] =
        "a ceiling is not measured on this machine (see ceilings): bounds and headroom "
        "are null until `tbd env --peak` measures it";
  const nlohmann::json j = judged();
  r["by_op"] = j["ops"];
  r["by_class"] = j["by_class"];
  r["by_layer"] = j["by_layer"];
  result["roofline"] = r;
}

std::vector<std::pair<std::string, std::string>> RooflineProbe::summary_lines() const {
  if (iterations_ == 0) return {{"roofline", "n/a (no instrumented iteration completed)"}};
  const nlohmann::json j = judged();
  double total = 0;
  std::map<std::string, double> bound_time;
  for (const auto& u : j["ops"]) {
    total += u["seconds"].get<double>();
    bound_time[u["bound"].is_string() ? u["bound"].get<std::string>() : "unjudged"] += u["seconds"].get<double>();
  }
  if (bound_time.count("unjudged") && bound_time.size() == 1)
    return {{"roofline", "bounds n/a: run `tbd env --peak` to measure this machine's ceilings"}};
  std::string shares;
  for (const auto& [b, t] : bound_time)
    shares += fmt::format("{}{} {:.0f}%", shares.empty() ? "" : ", ", b + "-bound", total > 0 ? 100 * t / total : 0);
  std::vector<std::pair<std::string, std::string>> lines = {{"roofline", shares + " of operator time"}};
  int shown = 0;
  for (const auto& u : j["ops"]) {
    if (!u["headroom_s"].is_number() || shown == 3) break;
    lines.push_back({shown++ == 0 ? "headroom" : "",
                     fmt::format("{} ({}-bound): {:.3f} ms/iter above its ceiling of {:.3f}",
                                 u["op"].get<std::string>(), u["bound"].get<std::string>(),
                                 1e3 * u["headroom_s"].get<double>(), 1e3 * u["attainable_s"].get<double>())});
  }
  return lines;
}

}  // namespace tbd
