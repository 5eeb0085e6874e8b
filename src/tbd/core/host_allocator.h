// The C allocator's treatment of freed host memory, set once per process.
//
// LibTorch's CPU tensors come from malloc (c10's CPU allocator caches
// nothing). glibc serves blocks above its mmap threshold with fresh mmap()s
// and returns them, and the heap's free top, to the kernel on free(): a
// training step then faults every large activation and gradient in again,
// page by page, in every iteration (measured on ncf small: ~900 minor faults
// per step). `retain` raises the mmap threshold to glibc's maximum (32 MiB on
// 64-bit) and stops heap trimming, so a steady step reuses the memory of the
// previous one, as PyTorch's caching allocators do on the GPU and as
// jemalloc/tcmalloc, which PyTorch's CPU launcher preloads, do on the host.
// The cost: the process keeps its peak heap after a step instead of
// shrinking between steps (the memory probe's figures, which count tensors,
// are unchanged). Blocks above 32 MiB are still mmapped.
#pragma once

#include <string>

#include "tbd/core/options.h"

namespace tbd {

struct HostAllocatorState {
  std::string requested;  // "retain" | "system"
  bool applied = false;   // false: not glibc, or mallopt refused
  std::string detail;     // what was set, or why nothing was
};

HostAllocatorState apply_host_allocator(HostAllocator allocator);

}  // namespace tbd
