#include "tbd/measure/probes/layers_probe.h"

#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>

#include "tbd/core/error.h"
#include "tbd/core/workload.h"
#include "tbd/measure/probes/op_observer.h"

namespace tbd {

namespace {

// The probe the callbacks report to: one at a time (a plain function
// pointer callback has no user data).
std::atomic<LayersProbe*> g_active{nullptr};

// A layer's forward open on this thread, or one of its autograd nodes running.
struct LayerFrame : at::ObserverContext {
  bool backward = false;
  std::string module;  // forward: the layer
  LayerGeometry geometry;
  std::vector<std::pair<uint64_t, int64_t>> nodes;  // forward: the autograd nodes its operators made
  int layer = -1;                                   // backward: the record
  double start = 0;
};
thread_local LayerFrame* t_open = nullptr;  // the layer forward open on this thread
// Autograd nodes running on this thread: no layer's forward opens inside one
// (a backward with create_graph, as wgan's gradient penalty runs in its
// forward phase, multiplies by the weights too).
thread_local int t_backward_depth = 0;

bool is_convolution(std::string_view n) {
  return n == "aten::conv1d" || n == "aten::conv2d" || n == "aten::conv3d" || n == "aten::convolution" ||
         n == "aten::_convolution";
}
bool is_inner_convolution(std::string_view n) { return n == "aten::convolution" || n == "aten::_convolution"; }
bool is_matrix_product(std::string_view n) {
  return n == "aten::linear" || n == "aten::addmm" || n == "aten::matmul" || n == "aten::mm";
}
// addmm(bias, input, weight.t()); the others take (input, weight, ...).
size_t input_argument(std::string_view n) { return n == "aten::addmm" ? 1 : 0; }
size_t weight_argument(std::string_view n) { return n == "aten::addmm" ? 2 : 1; }

const at::Tensor* tensor_argument(const at::RecordFunction& fn, size_t i) {
  const auto inputs = fn.inputs();
  if (i >= inputs.size() || !inputs[i].isTensor()) return nullptr;
  const at::Tensor& t = inputs[i].toTensor();
  return t.defined() && t.has_storage() ? &t : nullptr;
}

int64_t int_of(const c10::IValue& v) {
  if (v.isInt()) return v.toInt();
  if (v.isSymInt()) return v.toSymInt().guard_int(__FILE__, __LINE__);
  return 1;
}
std::vector<int64_t> ints_of(const c10::IValue& v) {
  if (v.isIntList()) return v.toIntVector();
  std::vector<int64_t> out;
  if (v.isList())
    for (const auto& e : v.toListRef()) out.push_back(int_of(e));
  return out;
}

// The input as the operator saw it: sizes, dtype, memory format, whether its gradient is computed.
void read_input(const at::Tensor& x, LayerGeometry& g) {
  g.input = x.sizes().vec();
  g.dtype = dtype_name(x.scalar_type());
  g.channels_last = (x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast)) ||
                    (x.dim() == 5 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast3d));
  g.input_requires_grad = x.requires_grad();
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
void read_convolution(const at::RecordFunction& fn, LayerGeometry& g) {
  const auto in = fn.inputs();
  if (in.size() < 9) return;
  if (const at::Tensor* x = tensor_argument(fn, 0)) read_input(*x, g);
  g.stride = ints_of(in[3]);
  g.padding = ints_of(in[4]);
  g.dilation = ints_of(in[5]);
  g.transposed = in[6].isBool() && in[6].toBool();
  g.groups = int_of(in[8]);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  LayersProbe* probe = g_active.load(std::memory_order_acquire);
  if (!probe || !probe->counting()) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    auto f = std::make_unique<LayerFrame>();  // for every node, so its end is seen
    f->backward = true;
    f->layer = fn.seqNr() < 0 ? -1 : probe->layer_of_node(fn.forwardThreadId(), fn.seqNr());
    ++t_backward_depth;
    f->start = steady_seconds();
    return f;
  }
  const std::string_view name = fn.name();
  if (LayerFrame* open = t_open) {  // an operator inside a layer's forward
    if (fn.seqNr() >= 0) open->nodes.emplace_back(at::RecordFunction::currentThreadId(), fn.seqNr());
    if (is_inner_convolution(name)) {
      read_convolution(fn, open->geometry);
    } else if (open->geometry.kind == "linear" && is_matrix_product(name)) {
      if (const at::Tensor* x = tensor_argument(fn, input_argument(name)))
        open->geometry.dtype = dtype_name(x->scalar_type());
    }
    return nullptr;
  }
  if (!probe->in_forward() || t_backward_depth > 0) return nullptr;
  const bool convolution = is_convolution(name);
  if (!convolution && !is_matrix_product(name)) return nullptr;
  const at::Tensor* w = tensor_argument(fn, weight_argument(name));
  if (!w) return nullptr;
  const LayersProbe::Weight* weight = probe->weight_at(w->data_ptr(), w->numel());
  if (!weight || convolution != (weight->kind != "linear")) return nullptr;
  const at::Tensor* x = tensor_argument(fn, input_argument(name));
  // A linear layer's forward reads its input's last dimension as the weight's
  // second ([out, in]); through addmm, matmul or mm it passes the weight
  // transposed (a view whose first stride is 1).
  if (!convolution && (!x || x->dim() < 1 || x->size(-1) != weight->sizes[1] ||
                       (name != "aten::linear" && (w->dim() != 2 || w->stride(0) != 1))))
    return nullptr;
  auto f = std::make_unique<LayerFrame>();
  f->module = weight->module;
  f->geometry.kind = weight->kind;
  f->geometry.weight = weight->sizes;
  f->geometry.bias = weight->bias;
  if (x) read_input(*x, f->geometry);
  if (is_inner_convolution(name)) read_convolution(fn, f->geometry);
  if (fn.seqNr() >= 0) f->nodes.emplace_back(at::RecordFunction::currentThreadId(), fn.seqNr());
  t_open = f.get();
  f->start = steady_seconds();  // last: the callback's own work is not the layer's
  return f;
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  const double end = steady_seconds();
  auto* f = static_cast<LayerFrame*>(ctx);
  if (!f) return;
  if (f->backward && t_backward_depth > 0) --t_backward_depth;
  if (!f->backward && t_open == f) t_open = nullptr;
  LayersProbe* probe = g_active.load(std::memory_order_acquire);
  if (!probe) return;
  if (f->backward) {
    if (f->layer >= 0) probe->add_backward(f->layer, end - f->start);
  } else {
    probe->add_forward(f->module, f->geometry, end - f->start, f->nodes);
  }
}

std::string kind_of_weight(int64_t dim) {
  switch (dim) {
    case 2: return "linear";
    case 3: return "conv1d";
    case 4: return "conv2d";
    case 5: return "conv3d";
    default: return "";
  }
}

}  // namespace

LayersProbe::~LayersProbe() { stop(); }

void LayersProbe::watch(const std::map<std::string, at::Tensor>& named_weights) {
  weights_.clear();
  for (const auto& [name, w] : named_weights) {
    const bool top = name == "weight";
    if (!top && !name.ends_with(".weight")) continue;
    const std::string kind = kind_of_weight(w.dim());
    if (kind.empty() || !w.defined() || !w.has_storage()) continue;
    const std::string module = top ? std::string("(model)") : name.substr(0, name.size() - 7);
    weights_[w.data_ptr()] = {module, kind, w.sizes().vec(), w.numel(),
                              named_weights.contains(top ? std::string("bias") : module + ".bias")};
  }
  start();
}

const LayersProbe::Weight* LayersProbe::weight_at(const void* data, int64_t numel) const {
  const auto it = weights_.find(data);
  if (it == weights_.end()) return nullptr;
  return it->second.numel == numel ? &it->second : nullptr;
}

void LayersProbe::add_forward(const std::string& module, const LayerGeometry& g, double seconds,
                              const std::vector<std::pair<uint64_t, int64_t>>& nodes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = module + "|" + g.key();
  auto it = record_of_.find(key);
  if (it == record_of_.end()) {
    it = record_of_.emplace(key, static_cast<int>(records_.size())).first;
    records_.push_back({module, g});
  }
  LayerRecord& r = records_[it->second];
  ++r.calls;
  r.forward_s += seconds;
  for (const auto& n : nodes) nodes_[n] = it->second;
}

int LayersProbe::layer_of_node(uint64_t thread, int64_t sequence_nr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = nodes_.find({thread, sequence_nr});
  return it == nodes_.end() ? -1 : it->second;
}

void LayersProbe::add_backward(int layer, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (layer >= 0 && layer < static_cast<int>(records_.size())) records_[layer].backward_s += seconds;
}

std::vector<LayerRecord> LayersProbe::records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

void LayersProbe::on_run_start(const RunContext& ctx) {
  workload_ = &ctx.workload;
  device_ = ctx.device;
}

void LayersProbe::on_window_begin(int) {
  // Read here, after set-up and warm-up: what moved the weights (the device,
  // the memory format, sharding's flat buffers) has run.
  if (workload_) watch(workload_->named_weights());
}

void LayersProbe::on_window_end(int) { stop(); }

void LayersProbe::on_iteration_begin(bool measured) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    nodes_.clear();
  }
  counting_ = measured;
}

void LayersProbe::on_iteration_end(const IterationRecord& r) {
  counting_ = false;
  if (!r.measured) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++iterations_;
  iteration_s_ += r.seconds;
}

void LayersProbe::on_phase_begin(Phase p) { forward_ = p == Phase::forward; }
void LayersProbe::on_phase_end(Phase) { forward_ = false; }

void LayersProbe::start() {
  if (handle_) return;
  LayersProbe* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this))
    throw Error("only one layers probe can be active in a process at a time");
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
                                      .needsInputs(true)
                                      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

void LayersProbe::stop() {
  if (!handle_) return;
  at::removeCallback(handle_);
  handle_ = 0;
  g_active.store(nullptr);
}

nlohmann::json LayersProbe::document() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const double n = std::max<int64_t>(iterations_, 1);
  const double step = iteration_s_ / n;
  // Host wall time is the computation on the CPU; on CUDA it is the launch
  // of asynchronous kernels, so no share is claimed there.
  const bool host_is_compute = device_.is_cpu();
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& r : records_) {
    const double per_iteration = (r.forward_s + r.backward_s) / n;
    layers.push_back({{"module", r.module},
                      {"geometry", to_json(r.geometry)},
                      {"calls_per_iteration", static_cast<double>(r.calls) / n},
                      {"forward_s", r.forward_s / n},
                      {"backward_s", r.backward_s / n},
                      {"share_of_iteration",
                       host_is_compute && step > 0 ? nlohmann::json(per_iteration / step) : nlohmann::json(nullptr)}});
  }
  nlohmann::json out = {{"iterations", iterations_},
                        {"iteration_s_mean", iterations_ > 0 ? nlohmann::json(step) : nlohmann::json(nullptr)},
                        {"weights_watched", weights_.size()},
                        {"layers", layers}};
  if (!host_is_compute)
    out["share_not_available"] =
        "on " + device_.str() + " an operator's host time is its kernels' launch, not their run";
  return out;
}

void LayersProbe::contribute(nlohmann::json& result) const { result["layers"] = document(); }

std::vector<std::pair<std::string, std::string>> LayersProbe::summary_lines() const {
  const auto doc = document();
  std::set<std::string> shapes;
  double share = 0, largest = -1;
  std::string largest_name;
  for (const auto& l : doc["layers"]) {
    shapes.insert(l["geometry"].dump());
    if (!l["share_of_iteration"].is_number()) continue;
    const double s = l["share_of_iteration"].get<double>();
    share += s;
    if (s > largest) largest = s, largest_name = l["module"].get<std::string>();
  }
  std::string text =
      fmt::format("{} convolution and linear layer calls, {} distinct shapes", doc["layers"].size(), shapes.size());
  if (largest >= 0)
    text += fmt::format("; {:.1f}% of the instrumented iteration, the largest {} {:.1f}%", 100 * share, largest_name,
                        100 * largest);
  return {{"layers", text}};
}

}  // namespace tbd
