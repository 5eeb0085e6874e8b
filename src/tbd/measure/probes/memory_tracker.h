// The memory probe's bookkeeping (memory_probe.h): every live block, the
// phase open now, the peak, and the blocks live at the peak, whose category
// may only be known later (when the phase that allocated them ends, or when
// a state tensor is recognised). It is told of allocations and frees by
// address (report()), so it holds no profiler or allocator and a test can
// drive it by hand. Reports arrive from autograd's threads too: every member
// is guarded by one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tbd/core/phases.h"

namespace tbd {

enum class MemoryCategory {
  weights,
  weight_gradients,
  optimizer_state,
  inputs,
  feature_maps,
  workspace,
  dynamic,
  other
};
constexpr int kMemoryCategories = 8;
const char* to_string(MemoryCategory c);

using MemoryBreakdown = std::array<int64_t, kMemoryCategories>;  // bytes per category

struct MemoryPoint {  // one point of the timeline, at a phase boundary or the peak
  double t_s = 0;     // seconds since the first measured iteration began
  int64_t iteration = 0;
  std::string event;  // "forward_begin", "forward_end", ..., "peak"
  MemoryBreakdown bytes{};
};

class MemoryTracker {
 public:
  // An allocation of `size` bytes at `ptr` (size > 0), or its free (size <= 0).
  void report(void* ptr, int64_t size);
  // Marks tensors' storages as `kind`; storages not seen allocated are added
  // as external blocks (allocated before tracking began), listed in `externals`.
  void mark(const std::vector<at::Tensor>& tensors, MemoryCategory kind, std::vector<void*>* externals = nullptr);
  // Forgets the external blocks `externals` lists (a batch that is no longer used), and clears it.
  void drop_externals(std::vector<void*>& externals);
  void phase_begin(Phase p);
  // Blocks of the ending phase that are still alive outlived it.
  void phase_end(Phase p);
  // The timeline's point after a phase (once its state tensors are marked).
  void point_after_phase(Phase p);
  // Inside a measured iteration (the peak and timeline count only there).
  void set_measuring(bool on);

  int64_t peak() const;
  MemoryBreakdown peak_breakdown() const;
  std::vector<MemoryPoint> timeline() const;
  std::array<int64_t, kPhaseCount> phase_peaks() const;  // by phase_index()

 private:
  enum class Fate { pending, survived, freed_inside };  // relative to the phase that allocated it
  struct Block {
    uint64_t id = 0;
    int64_t bytes = 0;
    std::optional<Phase> phase;  // the phase that allocated it; none: outside every phase
    Fate fate = Fate::pending;
    int kind = -1;          // a MemoryCategory from the workload's state, or -1
    bool external = false;  // allocated before tracking began (or unseen): never reported freed
  };
  static MemoryCategory category_of(const Block& b);
  void remove(void* ptr);
  void check_peak();
  void flush_peak() const;
  void update_peak_copy(const Block& b);
  void point(const std::string& event);

  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> live_;
  int64_t live_bytes_ = 0;
  uint64_t next_id_ = 1;
  std::optional<Phase> phase_;
  bool measuring_ = false;
  double t0_ = 0;
  int64_t iteration_ = 0;
  int64_t peak_ = -1;
  double peak_t_ = 0;
  int64_t peak_iteration_ = 0;
  // The live set at the peak, copied lazily (check_peak): mutable because
  // making that copy changes no figure a reader sees.
  mutable bool peak_pending_ = false;
  mutable std::vector<Block> peak_blocks_;
  mutable std::unordered_map<uint64_t, size_t> peak_index_;
  std::array<int64_t, kPhaseCount> phase_peaks_{};  // by phase_index()
  std::vector<MemoryPoint> timeline_;
};

}  // namespace tbd
