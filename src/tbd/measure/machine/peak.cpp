#include "tbd/measure/machine/peak.h"
#include "tbd/core/utc_time.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tbd/core/error.h"
#include "tbd/measure/machine/cuda_device_info.h"
#include "tbd/measure/machine/device.h"

namespace tbd {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return {};
}

std::string hostname() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string device_name(c10::Device device) {
  if (device.is_cpu()) {
    const std::string model = cpuinfo("model name");
    return model.empty() ? "unknown CPU" : model;
  }
  if (device.is_cuda()) {
    const nlohmann::json info = cuda_device_info(device.has_index() ? device.index() : 0);
    if (info.contains("name")) return info["name"].get<std::string>();
  }
  return "unknown " + device.str();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cv_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return m > 0 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) / m : 0;
}

nlohmann::json not_available(const std::string& why) { return {{"flops_per_s", nullptr}, {"not_available", why}}; }

bool has_flag(const std::string& flags, const std::string& f) {
  return (" " + flags + " ").find(" " + f + " ") != std::string::npos;
}

}  // namespace

std::string peak_cache_path() {
  if (const char* dir = std::getenv("TBD_CACHE_DIR"); dir && *dir) return std::string(dir) + "/peak.json";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tbd/peak.json";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/tbd/peak.json";
}

std::string peak_machine_key(c10::Device device, int threads) {
  std::string key = hostname() + " | " + device_name(device) + " | " + device.str();
  if (device.is_cpu()) key += " | " + std::to_string(threads) + " threads";
  return key + " | libtorch " + TORCH_VERSION;
}

nlohmann::json measure_gemm_peak(c10::Device device, const std::string& dtype, const GemmPeakOptions& o) {
  c10::ScalarType type;
  // TF32 is fp32 storage through the tensor cores: cuBLAS may round inputs to
  // TF32 only while this is allowed; restored when the measurement ends.
  const bool tf32 = dtype == "tf32";
  if (dtype == "fp32" || tf32) {
    type = c10::kFloat;
    if (tf32 && !device.is_cuda()) return not_available("TF32 is a tensor-core mode of NVIDIA GPUs");
  } else if (dtype == "fp16") {
    type = c10::kHalf;
    if (!device.is_cuda()) return not_available("the FP16 GEMM peak is measured on GPUs only");
  } else if (dtype == "bf16") {
    type = c10::kBFloat16;
    if (device.is_cpu()) {
      const std::string flags = cpuinfo("flags");
      if (!has_flag(flags, "avx512_bf16") && !has_flag(flags, "amx_bf16"))
        return not_available("this CPU has no BF16 instructions (avx512_bf16 or amx_bf16)");
    }
  } else {
    return not_available("no GEMM peak measurement for " + dtype);
  }
  const int64_t n = o.size > 0 ? o.size : (device.is_cpu() ? 2048 : 8192);
  struct Tf32Scope {  // fp32 GEMMs stay exact fp32 unless measuring tf32
    bool before = at::globalContext().allowTF32CuBLAS();
    explicit Tf32Scope(bool on) { at::globalContext().setAllowTF32CuBLAS(on); }
    ~Tf32Scope() { at::globalContext().setAllowTF32CuBLAS(before); }
  } tf32_scope(tf32);
  const auto opts = at::TensorOptions().dtype(type).device(device);
  at::Tensor a = at::randn({n, n}, opts), b = at::randn({n, n}, opts), c = at::empty({n, n}, opts);
  using Clock = std::chrono::steady_clock;
  auto run = [&](int64_t reps) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < reps; ++i) at::mm_out(c, a, b);
    synchronize(device);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  // Warm-up (thread pool, caches, clocks), then size a trial to trial_seconds.
  double one = run(1);
  one = std::min(one, run(1));
  const int64_t reps = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o.trial_seconds / std::max(one, 1e-9))));
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::vector<double> rates;
  while (static_cast<int>(rates.size()) < o.max_trials) {
    rates.push_back(flops * static_cast<double>(reps) / run(reps));
    if (static_cast<int>(rates.size()) >= o.min_trials && cv_of(rates) < o.target_cv) break;
  }
  return {{"flops_per_s", median(rates)},
          {"max_flops_per_s", *std::max_element(rates.begin(), rates.end())},
          {"dtype", dtype},
          {"gemm_n", n},
          {"repetitions_per_trial", reps},
          {"trials", rates.size()},
          {"cv", cv_of(rates)},
          {"threads", at::get_num_threads()},
          {"measured_utc", utc_now()},
          {"provenance", "median rate of " + std::to_string(rates.size()) + " trials of " + std::to_string(reps) +
                             " × at::mm_out on " + std::to_string(n) + "×" + std::to_string(n) + " " + dtype +
                             " matrices (2n³ FLOPs each), " + "measured by `tbd env --peak`"}};
}

std::optional<nlohmann::json> load_cached_peak(const std::string& key, const std::string& dtype) {
  std::ifstream in(peak_cache_path());
  if (!in) return std::nullopt;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    const auto& m = doc.at("machines").at(key).at(dtype);
    if (!m.at("flops_per_s").is_number()) return std::nullopt;
    return m;
  } catch (const std::exception&) {
    return std::nullopt;  // absent entry or a damaged file: as if not measured
  }
}

void store_cached_peak(const std::string& key, const nlohmann::json& measurements) {
  const fs::path path = peak_cache_path();
  nlohmann::json doc = {{"schema", "tbd.peak/1"}, {"machines", nlohmann::json::object()}};
  if (std::ifstream in(path); in) {
    try {
      doc = nlohmann::json::parse(in);
      if (!doc.contains("machines") || !doc["machines"].is_object()) doc["machines"] = nlohmann::json::object();
    } catch (const std::exception&) {
      // a damaged cache is replaced
    }
  }
  doc["schema"] = "tbd.peak/1";
  doc["machines"][key] = measurements;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << doc.dump(2) << "\n";
    if (!out) throw Error("cannot write the peak cache " + tmp.string() + ": check the directory (TBD_CACHE_DIR)");
  }
  fs::rename(tmp, path, ec);
  if (ec) throw Error("cannot write the peak cache " + path.string() + ": " + ec.message());
}

double cpu_flops_per_cycle(const std::string& vendor, int family, const std::string& flags, const std::string& dtype,
                           std::string& why) {
  const bool amd = vendor == "AuthenticAMD";
  if (dtype == "fp32") {
    if (has_flag(flags, "avx512f")) {
      if (amd && family < 26) {  // Zen 4 executes AVX-512 on 256-bit units
        why = "AVX-512 on AMD family " + std::to_string(family) + " (256-bit datapath): 2 FMA units × 8 FP32 lanes × 2";
        return 32;
      }
      why = "AVX-512: assumes 2 FMA units × 16 FP32 lanes × 2";
      return 64;
    }
    if (has_flag(flags, "avx2") && has_flag(flags, "fma")) {
      why = "AVX2+FMA: 2 FMA units × 8 FP32 lanes × 2";
      return 32;
    }
    if (has_flag(flags, "avx")) {
      why = "AVX: 8-lane add + 8-lane multiply per cycle";
      return 16;
    }
    why = "SSE: 4-lane add + 4-lane multiply per cycle";
    return 8;
  }
  if (dtype == "bf16") {
    if (has_flag(flags, "amx_bf16")) {
      why = "AMX-BF16: 1024 multiply-adds per cycle per core";
      return 2048;
    }
    if (has_flag(flags, "avx512_bf16")) {
      // VDPBF16PS: 16 FP32 lanes × 2 BF16 products each, per FMA unit.
      const double units = amd && family < 26 ? 1 : 2;
      why = amd && family < 26 ? "AVX512-BF16 on a 256-bit datapath: 64 FLOPs per cycle"
                               : "AVX512-BF16: assumes 2 units × 16 lanes × 2 products × 2";
      return 64 * units;
    }
    why = "no BF16 instructions";
    return 0;
  }
  why = "no instruction-rate figure for " + dtype + " on CPUs";
  return 0;
}

double gpu_datasheet_flops(const std::string& name, const std::string& dtype) {
  struct Row {
    const char* match;
    double fp32, tf32, bf16, fp16;  // TFLOP/s, dense
  };
  // Vendor datasheets (dense, no sparsity). More specific names first.
  static const Row table[] = {
      {"B200", 75, 1100, 2250, 2250},    {"H200", 67, 495, 989, 989},   {"H100 PCIe", 51, 378, 756, 756},
      {"H100 NVL", 60, 417.5, 835, 835}, {"H100", 67, 495, 989, 989},   {"A100", 19.5, 156, 312, 312},
      {"A10G", 31.2, 62.5, 125, 125},    {"A10", 31.2, 62.5, 125, 125}, {"L40S", 91.6, 183, 362, 362},
      {"L4", 30.3, 60, 121, 121},        {"V100", 15.7, 0, 0, 125},     {"T4", 8.1, 0, 0, 65},
  };
  for (const auto& r : table) {
    if (name.find(r.match) == std::string::npos) continue;
    const double t = dtype == "fp32"   ? r.fp32
                     : dtype == "tf32" ? r.tf32
                     : dtype == "bf16" ? r.bf16
                     : dtype == "fp16" ? r.fp16
                                       : 0;
    return t * 1e12;
  }
  return 0;
}

nlohmann::json datasheet_peak(c10::Device device, const std::string& dtype, int threads) {
  if (device.is_cpu()) {
    std::string why;
    int family = 0;
    try {
      family = std::stoi(cpuinfo("cpu family"));
    } catch (const std::exception&) {
    }
    const double per_cycle = cpu_flops_per_cycle(cpuinfo("vendor_id"), family, cpuinfo("flags"), dtype, why);
    if (per_cycle <= 0) return not_available(why);
    // The maximum boost clock where cpufreq tells it; otherwise the clock
    // /proc/cpuinfo reports (often the base clock in a VM), a lower bound on
    // what the cores may run at, so utilisation against it can pass 100%.
    double ghz = 0;
    std::string clock_source, clock_basis;
    if (std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); f >> ghz) {
      ghz /= 1e6;  // kHz
      clock_source = "maximum boost clock from cpufreq";
      clock_basis = "maximum";
    } else if (const std::string mhz = cpuinfo("cpu MHz"); !mhz.empty()) {
      ghz = std::stod(mhz) / 1e3;
      clock_source = "clock from /proc/cpuinfo, not the maximum boost clock (cpufreq unreadable)";
      clock_basis = "reported";
    }
    if (ghz <= 0) return not_available("the CPU clock is not readable");
    return {{"flops_per_s", threads * ghz * 1e9 * per_cycle},
            {"dtype", dtype},
            {"clock_basis", clock_basis},
            {"provenance", fmt::format("{} cores × {:.3f} GHz × {:g} FLOPs/cycle", threads, ghz, per_cycle)},
            {"assumptions", "cores = intra-op threads; " + clock_source + "; " + why}};
  }
  const std::string name = device_name(device);
  const double f = gpu_datasheet_flops(name, dtype);
  if (f <= 0) return not_available("no datasheet figure for '" + name + "' at " + dtype);
  return {{"flops_per_s", f}, {"dtype", dtype}, {"provenance", "vendor datasheet, dense " + dtype + ", " + name}};
}

nlohmann::json peaks_for_run(c10::Device device, int threads, const std::string& dtype) {
  nlohmann::json measured;
  const std::string key = peak_machine_key(device, threads);
  if (auto m = load_cached_peak(key, dtype)) {
    measured = *m;
    measured["cache_file"] = peak_cache_path();
  } else {
    std::string how = "run `tbd env --peak";
    if (!device.is_cpu()) how += " --device " + device.str();
    if (device.is_cpu()) how += " --threads " + std::to_string(threads);
    measured =
        not_available("no measured " + dtype + " peak for this machine in " + peak_cache_path() + ": " + how + "`");
  }
  return {{"measured", measured}, {"datasheet", datasheet_peak(device, dtype, threads)}};
}

std::vector<std::string> peak_dtypes(c10::Device device) {
  if (device.is_cuda()) return {"fp32", "tf32", "bf16", "fp16"};
  return {"fp32", "bf16"};
}

}  // namespace tbd
