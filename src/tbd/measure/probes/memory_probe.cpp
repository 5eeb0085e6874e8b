#include "tbd/measure/probes/memory_probe.h"

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <fmt/format.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>

#include "tbd/core/number_format.h"
#include "tbd/core/workload.h"
#include "tbd/dist/sharded_data_parallel.h"

namespace tbd {

namespace {

namespace prof = torch::profiler::impl;

// Installed as PROFILER_STATE debug info. Its profiler config is Disabled, so
// profilerEnabled() stays false and a Kineto profiler can still be enabled
// (it pushes its own state on top, and pops it when done).
class Reporter final : public prof::ProfilerStateBase {
 public:
  Reporter(std::shared_ptr<MemoryTracker> tracker, c10::Device device)
      : ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)),
        tracker_(std::move(tracker)),
        device_(device) {}
  void reportMemoryUsage(void* ptr, int64_t alloc_size, size_t, size_t, c10::Device device) override {
    if (device.type() != device_.type()) return;
    if (device_.has_index() && device.has_index() && device.index() != device_.index()) return;
    tracker_->report(ptr, alloc_size);
  }
  bool memoryProfilingEnabled() const override { return true; }
  prof::ActiveProfilerType profilerType() override { return prof::ActiveProfilerType::NONE; }

 private:
  std::shared_ptr<MemoryTracker> tracker_;
  c10::Device device_;
};

// The tensors holding the weights' gradients. A sparse gradient (an
// embedding table's) has no storage of its own: its indices and values do
// (uncoalesced after backward: one row per lookup, dlrm rm2's largest block).
std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& weights) {
  std::vector<at::Tensor> g;
  for (const auto& w : weights) {
    if (!w.defined() || !w.grad().defined()) continue;
    if (w.grad().is_sparse()) {
      g.push_back(w.grad()._indices());
      g.push_back(w.grad()._values());
    } else {
      g.push_back(w.grad());
    }
  }
  return g;
}

// The caching allocator's own account of the measured windows (peaks since
// the first window began): what it reserved from the device next to what
// tensors held, and how much of the reservation sat in split blocks that
// were free yet could not be returned. Through c10's device-generic allocator
// interface, so no CUDA header is needed.
nlohmann::json allocator_statistics(c10::Device device) {
  const auto stats = c10::getDeviceAllocator(device.type())->getDeviceStats(device.index());
  constexpr auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  const int64_t allocated = stats.allocated_bytes[all].peak, reserved = stats.reserved_bytes[all].peak;
  const auto share = [&](int64_t part) {
    return reserved > 0 ? nlohmann::json(static_cast<double>(part) / static_cast<double>(reserved))
                        : nlohmann::json(nullptr);
  };
  return {{"allocated_peak_bytes", allocated},
          {"reserved_peak_bytes", reserved},
          {"active_peak_bytes", stats.active_bytes[all].peak},
          {"inactive_split_peak_bytes", stats.inactive_split_bytes[all].peak},
          {"reserved_unused_share", share(reserved - allocated)},
          {"fragmentation", share(stats.inactive_split_bytes[all].peak)},
          {"segments_peak", stats.segment[all].peak},
          {"alloc_retries", stats.num_alloc_retries},
          {"ooms", stats.num_ooms},
          {"definition",
           "peaks of the CUDA caching allocator over the instrumented iterations; "
           "reserved_unused_share = 1 - allocated_peak / reserved_peak; fragmentation = "
           "inactive_split_peak / reserved_peak (free blocks inside split segments)"}};
}

}  // namespace

MemoryProbe::MemoryProbe() : tracker_(std::make_shared<MemoryTracker>()) {}
MemoryProbe::MemoryProbe(StateSource state, c10::Device device)
    : tracker_(std::make_shared<MemoryTracker>()), state_(std::move(state)), device_obj_(device) {}
MemoryProbe::~MemoryProbe() { stop(); }

void MemoryProbe::start(const ParameterSet& state) {
  device_ = device_obj_.str();
  if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr) {
    not_available_ = "another profiler holds this thread's profiler state; memory was not tracked";
    return;
  }
  weights_ = state.weights;
  optimizer_state_ = state.optimizer_state;
  // --sharding full: a unit's parameters have no memory between uses; the
  // rank's shards of them are its weights, and so is each gathered buffer.
  std::vector<at::Tensor> weights;
  for (const auto& w : state.weights)
    if (w.storage().nbytes() > 0) weights.push_back(w);
  if (sharded_ != nullptr) {
    const auto shards = sharded_->parameter_shards();
    weights.insert(weights.end(), shards.begin(), shards.end());
    const auto gathered = sharded_->gathered_parameters();
    weights.insert(weights.end(), gathered.begin(), gathered.end());
    sharded_->set_gather_observer(
        [tracker = tracker_](const torch::Tensor& whole) { tracker->mark({whole}, MemoryCategory::weights); });
  }
  tracker_->mark(weights, MemoryCategory::weights);
  tracker_->mark(state.buffers, MemoryCategory::other);
  tracker_->mark(state.optimizer_state, MemoryCategory::optimizer_state);
  auto reporter = std::make_shared<Reporter>(tracker_, device_obj_);
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, reporter);
  reporter_ = reporter;
  installed_ = true;
}

void MemoryProbe::stop() {
  if (!installed_) return;
  if (sharded_ != nullptr) sharded_->set_gather_observer(nullptr);
  c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  installed_ = false;
  reporter_.reset();
}

void MemoryProbe::on_run_start(const RunContext& ctx) {
  device_obj_ = ctx.device;
  sharded_ = ctx.sharded;
  limit_bytes_ = ctx.options.memory_limit_bytes;
  Workload* workload = &ctx.workload;
  state_ = [workload] { return workload->state(); };
}

// The reporter holds the thread's profiler state only during the
// instrumented iterations (this analysis probe's one window): Kineto refuses
// to start while any profiler state is installed, and the --trace iterations
// run after them.
void MemoryProbe::on_window_begin(int repetition) {
  if (repetition == 0 && device_obj_.is_cuda())
    c10::getDeviceAllocator(device_obj_.type())->resetPeakStats(device_obj_.index());
  if (!state_ || !not_available_.empty()) return;
  start(state_());
}

void MemoryProbe::on_window_end(int) {
  stop();
  if (device_obj_.is_cuda()) allocator_ = allocator_statistics(device_obj_);
}

void MemoryProbe::on_iteration_begin(bool measured) {
  tracker_->set_measuring(measured);
  // The last iteration's batches are gone; this one's (one per --grad-accum
  // micro-batch) are marked as they arrive.
  if (installed_) tracker_->drop_externals(batch_externals_);
}

void MemoryProbe::on_batch(const Batch& batch) {
  if (!installed_) return;
  std::vector<at::Tensor> tensors = batch.inputs;
  tensors.insert(tensors.end(), batch.targets.begin(), batch.targets.end());
  tracker_->mark(tensors, MemoryCategory::inputs, &batch_externals_);
}

void MemoryProbe::on_iteration_end(const IterationRecord&) { tracker_->set_measuring(false); }

void MemoryProbe::on_phase_begin(Phase p) {
  if (installed_) tracker_->phase_begin(p);
}

void MemoryProbe::on_phase_end(Phase p) {
  if (!installed_) return;
  tracker_->phase_end(p);
  if (p == Phase::backward) {
    tracker_->mark(gradients_of(weights_), MemoryCategory::weight_gradients);
    // Sharded runs keep the gradients in their buckets, not in .grad.
    if (sharded_ != nullptr) tracker_->mark(sharded_->gradient_buffers(), MemoryCategory::weight_gradients);
  }
  if (p == Phase::optimizer) {
    // Optimizers create their state lazily, at the first step.
    if (state_) optimizer_state_ = state_().optimizer_state;
    tracker_->mark(optimizer_state_, MemoryCategory::optimizer_state);
  }
  tracker_->point_after_phase(p);
}

void MemoryProbe::on_run_end(const RunContext&) { stop(); }

void MemoryProbe::contribute(nlohmann::json& result) const {
  nlohmann::json m;
  m["unit"] = "bytes";
  m["device"] = device_;
  m["limit_bytes"] = limit_bytes_ > 0 ? nlohmann::json(limit_bytes_) : nlohmann::json(nullptr);
  m["cuda_allocator"] = !allocator_.is_null()
                            ? allocator_
                            : nlohmann::json{{"not_available", "the CUDA caching allocator serves CUDA runs only"}};
  if (!not_available_.empty() || tracker_->peak() == 0) {
    m["peak_bytes"] = nullptr;
    m["not_available"] =
        not_available_.empty() ? "no allocation was seen in an instrumented iteration" : not_available_;
    result["memory"] = m;
    return;
  }
  m["peak_bytes"] = tracker_->peak();
  if (limit_bytes_ > 0) m["within_limit"] = tracker_->peak() <= limit_bytes_;
  nlohmann::json breakdown = nlohmann::json::object();
  const MemoryBreakdown b = tracker_->peak_breakdown();
  for (int c = 0; c < kMemoryCategories; ++c) breakdown[to_string(static_cast<MemoryCategory>(c))] = b[c];
  m["breakdown"] = breakdown;
  const auto pp = tracker_->phase_peaks();
  for (Phase p : kPhases) m["phase_peak_bytes"][to_string(p)] = pp[phase_index(p)];
  // Timeline, columnar and down-sampled to at most 300 points (the peak kept).
  const auto points = tracker_->timeline();
  const size_t stride = std::max<size_t>(1, (points.size() + 299) / 300);
  nlohmann::json t_s = nlohmann::json::array(), events = nlohmann::json::array(), iterations = nlohmann::json::array();
  std::array<nlohmann::json, kMemoryCategories> cols;
  for (auto& c : cols) c = nlohmann::json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    if (i % stride != 0 && points[i].event != "peak" && i + 1 != points.size()) continue;
    t_s.push_back(points[i].t_s);
    events.push_back(points[i].event);
    iterations.push_back(points[i].iteration);
    for (int c = 0; c < kMemoryCategories; ++c) cols[c].push_back(points[i].bytes[c]);
  }
  nlohmann::json bytes = nlohmann::json::object();
  for (int c = 0; c < kMemoryCategories; ++c) bytes[to_string(static_cast<MemoryCategory>(c))] = cols[c];
  m["timeline"] = {{"t_s", t_s},
                   {"event", events},
                   {"iteration", iterations},
                   {"bytes", bytes},
                   {"points_recorded", points.size()},
                   {"stride", stride}};
  result["memory"] = m;
}

std::vector<std::pair<std::string, std::string>> MemoryProbe::summary_lines() const {
  if (!not_available_.empty()) return {{"memory", "n/a (" + not_available_ + ")"}};
  const int64_t peak = tracker_->peak();
  if (peak <= 0) return {{"memory", "n/a (no allocation was seen in an instrumented iteration)"}};
  const MemoryBreakdown b = tracker_->peak_breakdown();
  std::string parts;
  for (int c = 0; c < kMemoryCategories; ++c) {
    if (b[c] == 0) continue;
    parts += fmt::format("{}{} {} ({:.0f}%)", parts.empty() ? "" : ", ", to_string(static_cast<MemoryCategory>(c)),
                         format_bytes(b[c]), 100.0 * static_cast<double>(b[c]) / static_cast<double>(peak));
  }
  std::vector<std::pair<std::string, std::string>> lines = {{"peak memory", format_bytes(peak) + " live on " + device_},
                                                            {"at peak", parts}};
  if (limit_bytes_ > 0)
    lines.push_back({"limit", fmt::format("peak {} {} --memory-limit {}", format_bytes(peak),
                                          peak <= limit_bytes_ ? "within" : "OVER", format_bytes(limit_bytes_))});
  if (!allocator_.is_null() && allocator_["fragmentation"].is_number())
    lines.push_back({"CUDA allocator", fmt::format("{} reserved at peak, {} allocated; fragmentation {:.1f}%",
                                                   format_bytes(allocator_["reserved_peak_bytes"].get<int64_t>()),
                                                   format_bytes(allocator_["allocated_peak_bytes"].get<int64_t>()),
                                                   100 * allocator_["fragmentation"].get<double>())});
  return lines;
}

}  // namespace tbd
