// The kernel-level view of a profile (docs/metrics.md#gpu): the share of
// wall time in which at least one device kernel ran, and time per kernel.
// Fed by the Kineto events of the profiled iterations; a plain function of
// the activities so it can be checked without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

struct DeviceActivity {
  enum class Kind { kernel, memcpy, memset };
  std::string name;
  Kind kind = Kind::kernel;
  uint64_t start_ns = 0, end_ns = 0;
};

// `wall_s`: host time of the profiled iterations, device synchronised at
// both ends. Returns kernel_busy_share, kernel and copy time per iteration and
// the `top` kernels by total time; or {kernel_busy_share: null,
// not_available: why} when there is no kernel to summarise.
nlohmann::json summarize_kernels(const std::vector<DeviceActivity>& activities, double wall_s, int iterations,
                                 size_t top = 15);

}  // namespace tbd
