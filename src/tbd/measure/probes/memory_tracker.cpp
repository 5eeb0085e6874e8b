#include "tbd/measure/probes/memory_tracker.h"

#include <algorithm>
#include <chrono>

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

// Steady-clock seconds, the timeline's clock (named apart from other files'
// clocks: unity batches share file-local names).
double memory_tracker_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

MemoryCategory MemoryTracker::category_of(const Block& b) {
  if (b.kind >= 0) return static_cast<MemoryCategory>(b.kind);
  if (b.phase == Phase::forward)
    return b.fate == Fate::freed_inside ? MemoryCategory::workspace : MemoryCategory::feature_maps;
  if (b.phase == Phase::backward) return MemoryCategory::dynamic;
  return MemoryCategory::other;
}

void MemoryTracker::report(void* ptr, int64_t size) {
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

void MemoryTracker::mark(const std::vector<at::Tensor>& tensors, MemoryCategory kind, std::vector<void*>* externals) {
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

void MemoryTracker::drop_externals(std::vector<void*>& externals) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_peak();
  for (void* p : externals) {
    auto it = live_.find(p);
    if (it != live_.end() && it->second.external) remove(p);
  }
  externals.clear();
}

void MemoryTracker::phase_begin(Phase p) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_peak();
  phase_ = p;
  if (measuring_) point(std::string(to_string(p)) + "_begin");
}

void MemoryTracker::phase_end(Phase p) {
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

void MemoryTracker::point_after_phase(Phase p) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_peak();
  if (measuring_) point(std::string(to_string(p)) + "_end");
}

void MemoryTracker::set_measuring(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_peak();
  if (on && t0_ == 0) t0_ = memory_tracker_now_s();
  if (on) ++iteration_;
  measuring_ = on;
}

int64_t MemoryTracker::peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::max<int64_t>(peak_, 0);
}

MemoryBreakdown MemoryTracker::peak_breakdown() const {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_peak();
  MemoryBreakdown out{};
  for (const auto& b : peak_blocks_) out[static_cast<int>(category_of(b))] += b.bytes;
  return out;
}

std::vector<MemoryPoint> MemoryTracker::timeline() const {
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

std::array<int64_t, kPhaseCount> MemoryTracker::phase_peaks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return phase_peaks_;
}

void MemoryTracker::remove(void* ptr) {
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  live_bytes_ -= it->second.bytes;
  live_.erase(it);
}

// A new maximum of live bytes. Copying the live set at every allocation
// that raises it would cost O(live blocks) per allocation while memory
// grows, so the copy is deferred to the next event that changes the live
// set or a category (a free, a phase boundary, a mark) or to a reader:
// until then the live set is still the one at the maximum, as allocations
// only raise it further.
void MemoryTracker::check_peak() {
  if (!measuring_) return;
  if (phase_) phase_peaks_[phase_index(*phase_)] = std::max(phase_peaks_[phase_index(*phase_)], live_bytes_);
  if (live_bytes_ > peak_) {
    peak_ = live_bytes_;
    peak_t_ = memory_tracker_now_s() - t0_;
    peak_iteration_ = iteration_;
    peak_pending_ = true;
  }
}

// The live set at the peak; categories are resolved from these copies
// later, as phases end and state tensors are recognised.
void MemoryTracker::flush_peak() const {
  if (!peak_pending_) return;
  peak_pending_ = false;
  peak_blocks_.clear();
  peak_index_.clear();
  peak_blocks_.reserve(live_.size());
  for (const auto& [ptr, b] : live_) {
    peak_index_[b.id] = peak_blocks_.size();
    peak_blocks_.push_back(b);
  }
}

void MemoryTracker::update_peak_copy(const Block& b) {
  auto it = peak_index_.find(b.id);
  if (it != peak_index_.end()) peak_blocks_[it->second] = b;
}

void MemoryTracker::point(const std::string& event) {
  MemoryPoint p;
  p.t_s = memory_tracker_now_s() - t0_;
  p.iteration = iteration_;
  p.event = event;
  for (const auto& [ptr, b] : live_) p.bytes[static_cast<int>(category_of(b))] += b.bytes;
  timeline_.push_back(std::move(p));
}

}  // namespace tbd
