#include "tbd/measure/probes/memory_probe.h"

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <fmt/format.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "tbd/core/number_format.h"
#include "tbd/core/workload.h"

namespace tbd {

const char* to_string(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::weights: return "weights";
    case MemoryCategory::weight_gradients: return "weight_gradients";
    case MemoryCategory::optimizer_state: return "optimizer_state";
    case MemoryCategory::inputs: return "inputs";
    case MemoryCategory::feature_maps: return "feature_maps";
    case MemoryCategory::workspace: return "workspace";
    case MemoryCategory::dynamic: return "dynamic";
    case MemoryCategory::other: return "other";
  }
  return "?";
}

namespace {

enum class Fate { pending, survived, freed_inside };  // relative to the phase that allocated it

struct Block {
  uint64_t id = 0;
  int64_t bytes = 0;
  std::optional<Phase> phase;  // the phase that allocated it; none: outside every phase
  Fate fate = Fate::pending;
  int kind = -1;          // a MemoryCategory from the workload's state, or -1
  bool external = false;  // allocated before tracking began (or unseen): never reported freed
};

MemoryCategory category_of(const Block& b) {
  if (b.kind >= 0) return static_cast<MemoryCategory>(b.kind);
  if (b.phase == Phase::forward)
    return b.fate == Fate::freed_inside ? MemoryCategory::workspace : MemoryCategory::feature_maps;
  if (b.phase == Phase::backward) return MemoryCategory::dynamic;
  return MemoryCategory::other;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

// The bookkeeping: every live block, the current phase, the peak and the
// blocks live at the peak (whose category may only be known later, when the
// phase that allocated them ends). All members are guarded by `mutex`.
class MemoryTracker {
 public:
  void report(void* ptr, int64_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (size > 0) {
      if (live_.count(ptr)) {  // an address reused after an unreported free
        flush_peak();
        remove(ptr);
      }
      Block b;
      b.id = next_id_++;
      b.bytes = size;
      b.phase = phase_;
      live_[ptr] = b;
      live_bytes_ += size;
      check_peak();
    } else {
      auto it = live_.find(ptr);
      if (it == live_.end()) return;
      flush_peak();
      Block& b = it->second;
      if (b.phase == phase_ && b.fate == Fate::pending) {
        b.fate = Fate::freed_inside;
        update_peak_copy(b);
      }
      remove(ptr);
    }
  }

  // Marks tensors' storages as `kind`; storages not seen allocated are added
  // as external blocks (allocated before tracking began).
  void mark(const std::vector<at::Tensor>& tensors, MemoryCategory kind, std::vector<void*>* externals = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& t : tensors) {
      if (!t.defined() || !t.has_storage()) continue;
      void* ptr = t.storage().data_ptr().get();
      if (!ptr) continue;
      auto it = live_.find(ptr);
      if (it == live_.end()) {
        Block b;
        b.id = next_id_++;
        b.bytes = static_cast<int64_t>(t.storage().nbytes());
        b.phase.reset();
        b.fate = Fate::survived;
        b.external = true;
        b.kind = static_cast<int>(kind);
        live_[ptr] = b;
        live_bytes_ += b.bytes;
        check_peak();
        if (externals) externals->push_back(ptr);
        continue;
      }
      flush_peak();
      it->second.kind = static_cast<int>(kind);
      update_peak_copy(it->second);
    }
  }

  void drop_externals(std::vector<void*>& externals) {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    for (void* p : externals) {
      auto it = live_.find(p);
      if (it != live_.end() && it->second.external) remove(p);
    }
    externals.clear();
  }

  void phase_begin(Phase p) {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    phase_ = p;
    if (measuring_) point(std::string(to_string(p)) + "_begin");
  }

  // Blocks of the ending phase that are still alive outlived it.
  void phase_end(Phase p) {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    for (auto& [ptr, b] : live_) {
      if (b.phase == p && b.fate == Fate::pending) {
        b.fate = Fate::survived;
        update_peak_copy(b);
      }
    }
    phase_.reset();
  }

  void point_after_phase(Phase p) {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    if (measuring_) point(std::string(to_string(p)) + "_end");
  }

  void set_measuring(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    if (on && t0_ == 0) t0_ = now_s();
    if (on) ++iteration_;
    measuring_ = on;
  }

  int64_t peak() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::max<int64_t>(peak_, 0);
  }
  MemoryBreakdown peak_breakdown() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    MemoryBreakdown out{};
    for (const auto& b : peak_blocks_) out[static_cast<int>(category_of(b))] += b.bytes;
    return out;
  }
  std::vector<MemoryPoint> timeline() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_peak();
    std::vector<MemoryPoint> out = timeline_;
    if (peak_ >= 0) {
      MemoryPoint p;
      p.event = "peak";
      p.t_s = peak_t_;
      p.iteration = peak_iteration_;
      for (const auto& b : peak_blocks_) p.bytes[static_cast<int>(category_of(b))] += b.bytes;
      out.insert(std::upper_bound(out.begin(), out.end(), p,
                                  [](const MemoryPoint& a, const MemoryPoint& b) { return a.t_s < b.t_s; }),
                 p);
    }
    return out;
  }
  std::array<int64_t, kPhaseCount> phase_peaks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return phase_peaks_;
  }

 private:
  void remove(void* ptr) {
    auto it = live_.find(ptr);
    if (it == live_.end()) return;
    live_bytes_ -= it->second.bytes;
    live_.erase(it);
  }

  // A new maximum of live bytes. Copying the live set at every allocation
  // that raises it would cost O(live blocks) per allocation while memory
  // grows, so the copy is deferred to the next event that changes the live
  // set or a category (a free, a phase boundary, a mark): until then the live
  // set is still the one at the maximum, as allocations only raise it further.
  void check_peak() {
    if (!measuring_) return;
    if (phase_) phase_peaks_[phase_index(*phase_)] = std::max(phase_peaks_[phase_index(*phase_)], live_bytes_);
    if (live_bytes_ > peak_) {
      peak_ = live_bytes_;
      peak_t_ = now_s() - t0_;
      peak_iteration_ = iteration_;
      peak_pending_ = true;
    }
  }

  void flush_peak() {
    if (peak_pending_) take_peak();
  }

  // The live set at the peak; categories are resolved from these copies
  // later, as phases end and state tensors are recognised.
  void take_peak() {
    peak_pending_ = false;
    peak_blocks_.clear();
    peak_index_.clear();
    peak_blocks_.reserve(live_.size());
    for (const auto& [ptr, b] : live_) {
      peak_index_[b.id] = peak_blocks_.size();
      peak_blocks_.push_back(b);
    }
  }

  void update_peak_copy(const Block& b) {
    auto it = peak_index_.find(b.id);
    if (it != peak_index_.end()) peak_blocks_[it->second] = b;
  }

  void point(const std::string& event) {
    MemoryPoint p;
    p.t_s = now_s() - t0_;
    p.iteration = iteration_;
    p.event = event;
    for (const auto& [ptr, b] : live_) p.bytes[static_cast<int>(category_of(b))] += b.bytes;
    timeline_.push_back(std::move(p));
  }

  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> live_;
  int64_t live_bytes_ = 0;
  uint64_t next_id_ = 1;
  std::optional<Phase> phase_;
  bool measuring_ = false;
  double t0_ = 0;
  int64_t iteration_ = 0;
  int64_t peak_ = -1;
  bool peak_pending_ = false;
  double peak_t_ = 0;
  int64_t peak_iteration_ = 0;
  std::vector<Block> peak_blocks_;
  std::unordered_map<uint64_t, size_t> peak_index_;
  std::array<int64_t, kPhaseCount> phase_peaks_{};  // by phase_index()
  std::vector<MemoryPoint> timeline_;
};

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

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& weights) {
  std::vector<at::Tensor> g;
  for (const auto& w : weights)
    if (w.defined() && w.grad().defined()) g.push_back(w.grad());
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
MemoryProbe::~MemoryProbe() { stop(); }

void MemoryProbe::start(const std::vector<at::Tensor>& weights, const std::vector<at::Tensor>& buffers,
                        const std::vector<at::Tensor>& optimizer_state, c10::Device device) {
  device_ = device.str();
  if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr) {
    not_available_ = "another profiler holds this thread's profiler state; memory was not tracked";
    return;
  }
  weights_ = weights;
  optimizer_state_ = optimizer_state;
  tracker_->mark(weights, MemoryCategory::weights);
  tracker_->mark(buffers, MemoryCategory::other);
  tracker_->mark(optimizer_state, MemoryCategory::optimizer_state);
  auto reporter = std::make_shared<Reporter>(tracker_, device);
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, reporter);
  reporter_ = reporter;
  installed_ = true;
}

void MemoryProbe::stop() {
  if (!installed_) return;
  c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  installed_ = false;
  reporter_.reset();
}

void MemoryProbe::set_optimizer_state_source(std::function<std::vector<at::Tensor>()> source) {
  optimizer_state_source_ = std::move(source);
}

void MemoryProbe::on_run_start(const RunContext& ctx) {
  workload_ = &ctx.workload;
  device_obj_ = ctx.device;
  Workload* workload = workload_;
  optimizer_state_source_ = [workload] { return workload->state().optimizer_state; };
}

// The reporter holds the thread's profiler state only during the
// instrumented iterations (this analysis probe's one window): Kineto refuses
// to start while any profiler state is installed, and the --trace iterations
// run after them.
void MemoryProbe::on_window_begin(int repetition) {
  if (repetition == 0 && device_obj_.is_cuda())
    c10::getDeviceAllocator(device_obj_.type())->resetPeakStats(device_obj_.index());
  if (!workload_ || !not_available_.empty()) return;
  const ParameterSet s = workload_->state();
  start(s.weights, s.buffers, s.optimizer_state, device_obj_);
}

void MemoryProbe::on_window_end(int) {
  stop();
  if (device_obj_.is_cuda()) allocator_ = allocator_statistics(device_obj_);
}

void MemoryProbe::on_iteration_begin(bool measured) { tracker_->set_measuring(measured); }

void MemoryProbe::on_batch(const Batch& batch) {
  if (!installed_) return;
  tracker_->drop_externals(batch_externals_);
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
  if (p == Phase::backward) tracker_->mark(gradients_of(weights_), MemoryCategory::weight_gradients);
  if (p == Phase::optimizer) {
    // Optimizers create their state lazily, at the first step.
    if (optimizer_state_source_) optimizer_state_ = optimizer_state_source_();
    tracker_->mark(optimizer_state_, MemoryCategory::optimizer_state);
  }
  tracker_->point_after_phase(p);
}

void MemoryProbe::on_run_end(const RunContext&) { stop(); }

int64_t MemoryProbe::peak_bytes() const { return tracker_->peak(); }
MemoryBreakdown MemoryProbe::peak_breakdown() const { return tracker_->peak_breakdown(); }
std::vector<MemoryPoint> MemoryProbe::timeline() const { return tracker_->timeline(); }
std::array<int64_t, kPhaseCount> MemoryProbe::phase_peaks() const { return tracker_->phase_peaks(); }

void MemoryProbe::contribute(nlohmann::json& result) const {
  nlohmann::json m;
  m["unit"] = "bytes";
  m["device"] = device_;
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
  if (!allocator_.is_null() && allocator_["fragmentation"].is_number())
    lines.push_back({"CUDA allocator", fmt::format("{} reserved at peak, {} allocated; fragmentation {:.1f}%",
                                                   format_bytes(allocator_["reserved_peak_bytes"].get<int64_t>()),
                                                   format_bytes(allocator_["allocated_peak_bytes"].get<int64_t>()),
                                                   100 * allocator_["fragmentation"].get<double>())});
  return lines;
}

}  // namespace tbd
