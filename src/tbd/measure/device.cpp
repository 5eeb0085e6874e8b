#include "tbd/measure/device.h"

#include <torch/cuda.h>

#include "tbd/core/error.h"

namespace tbd {

c10::Device resolve_device(const std::string& text) {
  if (text == "cpu") return c10::Device(c10::kCPU);
  if (text.rfind("cuda", 0) != 0)
    throw UsageError("--device must be cpu, cuda or cuda:N, got '" + text + "'");
  int index = 0;
  if (text.size() > 4) {
    if (text[4] != ':' || text.size() == 5 ||
        text.find_first_not_of("0123456789", 5) != std::string::npos)
      throw UsageError("--device must be cpu, cuda or cuda:N, got '" + text + "'");
    index = std::stoi(text.substr(5));
  }
  if (!torch::cuda::is_available())
    throw UsageError("--device " + text +
                     ": no CUDA device is available (this LibTorch has no CUDA, or no GPU and "
                     "driver were found); use --device cpu, or build against a CUDA LibTorch "
                     "(see README: Torch_DIR)");
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    throw UsageError("--device " + text + ": only " + std::to_string(count) +
                     " CUDA device(s) visible (cuda:0 .. cuda:" + std::to_string(count - 1) + ")");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void synchronize(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace tbd
