#include "tbd/dist/local_capacity.h"

#include <sched.h>

#include <cstdio>
#include <fstream>

#include "tbd/core/error.h"

namespace tbd {

LocalCapacity local_capacity() {
  LocalCapacity c;
  cpu_set_t set;
  CPU_ZERO(&set);
  c.cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") c.available_bytes = kib * 1024;
  return c;
}

std::string local_ranks_refusal(int nproc, bool on_cpu, const LocalCapacity& capacity) {
  if (nproc <= 1) return "";
  char gib[32];
  std::snprintf(gib, sizeof(gib), "%.1f", static_cast<double>(capacity.available_bytes) / (1 << 30));
  if (on_cpu && nproc > capacity.cpus)
    return std::to_string(nproc) + " ranks on " + std::to_string(capacity.cpus) + " CPU" +
           (capacity.cpus == 1 ? "" : "s") +
           " would only share them, so the run says nothing about scaling; "
           "use --nproc " +
           std::to_string(capacity.cpus) + " or fewer";
  if (capacity.available_bytes > 0 && nproc * kRankMemoryBytes > capacity.available_bytes) {
    const int64_t room = capacity.available_bytes / kRankMemoryBytes;
    return std::to_string(nproc) + " ranks need at least " + std::to_string(nproc * (kRankMemoryBytes >> 20)) +
           " MiB, but only " + gib + " GiB of memory is available (room for about " + std::to_string(room) +
           " ranks at " + std::to_string(kRankMemoryBytes >> 20) + " MiB each, the least a rank needs)";
  }
  return "";
}

void check_local_ranks_fit(int nproc, bool on_cpu) {
  const std::string why = local_ranks_refusal(nproc, on_cpu, local_capacity());
  if (!why.empty())
    throw UsageError("--nproc " + std::to_string(nproc) + ": " + why + " (or add --oversubscribe to run anyway)");
}

}  // namespace tbd
