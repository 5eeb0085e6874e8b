#include "tbd/measure/machine/nvml.h"

#include <dlfcn.h>

namespace tbd {
namespace {
// The subset of nvml.h tbd uses (stable C ABI; NVML_SUCCESS is 0).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;         // milliwatts
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // millijoules
};

namespace {
template <typename F>
bool bind(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  return fn != nullptr;
}
}  // namespace

Nvml::Nvml(const std::string& library) : api_(std::make_unique<Api>()) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* err = dlerror();
    why_ = "NVML not found (" + library + ": " + (err ? err : "dlopen failed") + "); no NVIDIA driver on this machine";
    return;
  }
  Api& a = *api_;
  if (!bind(handle_, "nvmlInit_v2", a.init) || !bind(handle_, "nvmlShutdown", a.shutdown) ||
      !bind(handle_, "nvmlErrorString", a.error_string) || !bind(handle_, "nvmlDeviceGetCount_v2", a.count) ||
      !bind(handle_, "nvmlDeviceGetHandleByIndex_v2", a.handle) || !bind(handle_, "nvmlDeviceGetName", a.name) ||
      !bind(handle_, "nvmlDeviceGetUtilizationRates", a.utilization) ||
      !bind(handle_, "nvmlDeviceGetMemoryInfo", a.memory) || !bind(handle_, "nvmlDeviceGetPowerUsage", a.power)) {
    why_ = "NVML in " + library + " lacks a required symbol (driver too old?)";
    return;
  }
  bind(handle_, "nvmlDeviceGetTotalEnergyConsumption", a.energy);  // optional: Volta or newer
  if (const nvmlReturn_t r = a.init(); r != 0) {
    why_ = std::string("nvmlInit failed: ") + a.error_string(r);
    return;
  }
  ok_ = true;
}

Nvml::~Nvml() {
  if (ok_) api_->shutdown();
  if (handle_) dlclose(handle_);
}

int Nvml::device_count() const {
  unsigned int n = 0;
  return ok_ && api_->count(&n) == 0 ? static_cast<int>(n) : 0;
}

std::string Nvml::device_name(int index) const {
  nvmlDevice_t d = nullptr;
  char name[96] = {0};
  if (!ok_ || api_->handle(static_cast<unsigned>(index), &d) != 0 || api_->name(d, name, sizeof(name)) != 0)
    return "unknown";
  return name;
}

NvmlSample Nvml::sample(int index) const {
  NvmlSample s;
  nvmlDevice_t d = nullptr;
  if (!ok_ || api_->handle(static_cast<unsigned>(index), &d) != 0) return s;
  nvmlUtilization_t u{};
  if (api_->utilization(d, &u) == 0) s.gpu_util = u.gpu / 100.0, s.memory_util = u.memory / 100.0;
  nvmlMemory_t m{};
  if (api_->memory(d, &m) == 0)
    s.memory_used_bytes = static_cast<int64_t>(m.used), s.memory_total_bytes = static_cast<int64_t>(m.total);
  unsigned int mw = 0;
  if (api_->power(d, &mw) == 0) s.power_w = mw / 1000.0;
  return s;
}

std::optional<double> Nvml::total_energy_j(int index) const {
  nvmlDevice_t d = nullptr;
  unsigned long long mj = 0;
  if (!ok_ || !api_->energy || api_->handle(static_cast<unsigned>(index), &d) != 0 || api_->energy(d, &mj) != 0)
    return std::nullopt;
  return static_cast<double>(mj) / 1000.0;
}

}  // namespace tbd
