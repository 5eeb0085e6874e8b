// How many local ranks this machine can hold. `--nproc 1000` on a 2-core
// machine would fork hundreds of LibTorch processes that only share two
// cores (a scaling figure that means nothing) until memory runs out; tbd
// refuses instead, and --oversubscribe runs it anyway.
#pragma once

#include <cstdint>
#include <string>

namespace tbd {

struct LocalCapacity {
  int cpus = 1;                 // CPUs this process may run on (its affinity mask)
  int64_t available_bytes = 0;  // MemAvailable; 0 when unknown
};

LocalCapacity local_capacity();

// The least memory a CPU rank needs: LibTorch's runtime and a small model.
inline constexpr int64_t kRankMemoryBytes = int64_t{256} << 20;

// Empty when `nproc` ranks fit, else why not: more ranks than CPUs (CPU runs;
// a CUDA rank has its own GPU), or less available memory than nproc ×
// kRankMemoryBytes.
std::string local_ranks_refusal(int nproc, bool on_cpu, const LocalCapacity& capacity);

// Throws UsageError with the refusal and the override (--oversubscribe).
void check_local_ranks_fit(int nproc, bool on_cpu);

}  // namespace tbd
