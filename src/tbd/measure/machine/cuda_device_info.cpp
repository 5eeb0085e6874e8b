#include "tbd/measure/machine/cuda_device_info.h"

#include <string>

#ifdef TBD_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace tbd {

nlohmann::json cuda_device_info(int index) {
#ifdef TBD_WITH_CUDA
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  return {{"index", index},
          {"name", std::string(p->name)},
          {"total_memory_bytes", static_cast<int64_t>(p->totalGlobalMem)},
          {"multiprocessors", p->multiProcessorCount},
          {"compute_capability", std::to_string(p->major) + "." + std::to_string(p->minor)},
          {"l2_cache_bytes", p->l2CacheSize}};
#else
  return {{"index", index}, {"not_available", "this tbd was built against a LibTorch without CUDA"}};
#endif
}

}  // namespace tbd
