// What a CUDA device is: name, memory, multiprocessors, compute capability.
// One of the two files with CUDA headers (docs/gpu.md); in a CPU build it
// says "not available".
#pragma once

#include <nlohmann/json.hpp>

namespace tbd {

// {name, total_memory_bytes, multiprocessors, compute_capability, l2_cache_bytes}
// of CUDA device `index`, or {not_available: why}.
nlohmann::json cuda_device_info(int index);

}  // namespace tbd
