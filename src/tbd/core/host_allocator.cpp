#include "tbd/core/host_allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tbd {
namespace {
// mallopt cannot give glibc back its adaptive thresholds: once a run in this
// process retained memory, a later `system` run in it does not get defaults.
bool retained_in_this_process = false;
}  // namespace

HostAllocatorState apply_host_allocator(HostAllocator allocator) {
  HostAllocatorState state{to_string(allocator), false, ""};
  if (allocator == HostAllocator::system) {
    state.applied = !retained_in_this_process;
    state.detail = state.applied ? "the C library's defaults"
                                 : "not applied: an earlier run in this process set the retaining thresholds, "
                                   "which glibc cannot undo; run it in a process of its own";
    return state;
  }
#if defined(__GLIBC__)
  // glibc refuses a threshold above HEAP_MAX_SIZE / 2 (32 MiB on 64-bit).
  constexpr int kMmapThreshold = 32 << 20;
  constexpr int kTrimThreshold = 1 << 30;
  state.applied = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  retained_in_this_process = retained_in_this_process || state.applied;
  state.detail = state.applied ? "glibc mallopt: M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 1 GiB"
                               : "glibc refused mallopt(M_MMAP_THRESHOLD / M_TRIM_THRESHOLD); its defaults apply";
#else
  state.detail = "not available: not glibc; the C library's defaults apply";
#endif
  return state;
}

}  // namespace tbd
