// NVML loaded with dlopen at run time, so a CPU build still reads GPU
// utilisation, memory, power and energy when a driver is present. Only the
// few calls tbd needs, by their versioned symbol names.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tbd {

struct NvmlSample {
  std::optional<double> gpu_util;     // share of time a kernel ran (0..1), last sample period
  std::optional<double> memory_util;  // share of time device memory was read or written (0..1)
  std::optional<int64_t> memory_used_bytes;
  std::optional<int64_t> memory_total_bytes;
  std::optional<double> power_w;
};

class Nvml {
 public:
  // Loads `library` (default libnvidia-ml.so.1) and initialises NVML. Check
  // available(); why() says what failed.
  explicit Nvml(const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return ok_; }
  const std::string& why() const { return why_; }
  int device_count() const;
  std::string device_name(int index) const;
  NvmlSample sample(int index) const;
  // Energy since the driver loaded, in joules (Volta or newer); nullopt otherwise.
  std::optional<double> total_energy_j(int index) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;
  bool ok_ = false;
  std::string why_;
};

}  // namespace tbd
