#include "tbd/data/batch_pool.h"

namespace tbd {

torch::Tensor to_device(const torch::Tensor& t, c10::Device device) {
  if (device.is_cpu()) return t;
  return t.pin_memory().to(device, /*non_blocking=*/true);
}

}  // namespace tbd
