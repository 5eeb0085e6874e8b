#include "tbd/measure/machine/environment.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <sched.h>
#include <sys/utsname.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "tbd/dist/process_group.h"
#include "tbd/measure/machine/cuda_device_info.h"

#include "git_revision.h"
#include "torch_source.h"

namespace tbd {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// First value of a "key : value" line in a /proc file; empty if absent.
std::string proc_value(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return {};
}

nlohmann::json cpu_info() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int affinity = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1;
  std::string model = proc_value("/proc/cpuinfo", "model name");
  nlohmann::json j = {{"model", model.empty() ? nlohmann::json("not available") : nlohmann::json(model)},
                      {"logical_cores", std::thread::hardware_concurrency()},
                      {"cores_available_to_process", affinity}};
  const std::string mhz = proc_value("/proc/cpuinfo", "cpu MHz");
  if (!mhz.empty()) j["mhz"] = std::stod(mhz);
  const std::string flags = proc_value("/proc/cpuinfo", "flags");
  nlohmann::json isa = nlohmann::json::array();
  for (const char* f : {"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
    if ((" " + flags + " ").find(std::string(" ") + f + " ") != std::string::npos) isa.push_back(f);
  j["vector_extensions"] = isa;
  return j;
}

nlohmann::json memory_info() {
  const std::string total = proc_value("/proc/meminfo", "MemTotal");  // "24567 kB"
  if (total.empty()) return {{"total_bytes", nullptr}, {"not_available", "/proc/meminfo unreadable"}};
  return {{"total_bytes", std::stoll(total) * 1024}};
}

nlohmann::json os_info() {
  utsname u{};
  if (uname(&u) != 0) return "not available";
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string pretty;
  std::ifstream rel("/etc/os-release");
  std::string line;
  while (std::getline(rel, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) pretty = line.substr(12);
  if (pretty.size() >= 2 && pretty.front() == '"') pretty = pretty.substr(1, pretty.size() - 2);
  return {{"system", u.sysname},
          {"release", u.release},
          {"machine", u.machine},
          {"distribution", pretty},
          {"hostname", host}};
}

nlohmann::json accelerator_info() {
  nlohmann::json j;
  // at::hasCUDA() is false in a CUDA LibTorch without a GPU: the build is tbd's own flag.
#ifdef TBD_WITH_CUDA
  j["cuda_build"] = true;
#else
  j["cuda_build"] = false;
#endif
  const bool available = torch::cuda::is_available();
  j["cuda_available"] = available;
  j["cuda_devices"] = available ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
  if (available) {
    const auto& hooks = at::detail::getCUDAHooks();
    j["cuda_runtime"] = hooks.versionCUDART();
    j["cudnn"] = hooks.hasCuDNN() ? nlohmann::json(hooks.versionCuDNN()) : nlohmann::json("not available");
    nlohmann::json devices = nlohmann::json::array();
    for (int64_t d = 0; d < j["cuda_devices"].get<int64_t>(); ++d)
      devices.push_back(cuda_device_info(static_cast<int>(d)));
    j["devices"] = devices;
    j["nccl_backend"] = ProcessGroup::nccl_available();
  } else {
    const std::string why = j["cuda_build"].get<bool>() ? "not available: no GPU or driver found"
                                                        : "not available: LibTorch built without CUDA";
    j["cuda_runtime"] = why;
    j["cudnn"] = why;
    j["nccl_backend"] = ProcessGroup::nccl_available();
  }
  return j;
}

}  // namespace

nlohmann::json capture_environment() {
  nlohmann::json env;
  env["cpu"] = cpu_info();
  env["memory"] = memory_info();
  env["os"] = os_info();
  env["compiler"] = std::string("g++ ") + __VERSION__;
  env["libtorch"] = {{"version", TORCH_VERSION},          {"source", TBD_TORCH_SOURCE},
                     {"build_config", at::show_config()}, {"parallel", at::get_parallel_info()},
                     {"mkldnn", at::hasMKLDNN()},         {"mkl", at::hasMKL()},
                     {"openmp", at::hasOpenMP()}};
  env["threads"] = {{"intra_op", at::get_num_threads()}, {"inter_op", at::get_num_interop_threads()}};
  env["accelerator"] = accelerator_info();
  env["tbd"] = {{"version", TBD_VERSION}, {"git_revision", TBD_GIT_REVISION}};
  return env;
}

std::string version_text() {
#ifdef TBD_WITH_CUDA
  const char* build = "CUDA build";
#else
  const char* build = "CPU build";
#endif
  return std::string("tbd ") + TBD_VERSION + " (git " + TBD_GIT_REVISION + "), LibTorch " + TORCH_VERSION + ", " +
         build;
}

}  // namespace tbd
