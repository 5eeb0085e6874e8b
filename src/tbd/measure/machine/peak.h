// Peak FLOP/s of a device, two ways (docs/metrics.md#peak):
//  - measured: an achievable rate, a large GEMM through LibTorch, cached per
//    machine in a file the user can see and delete (`tbd env --peak` writes it);
//  - datasheet: the instruction-rate figure (CPU: cores × clock × FLOPs per
//    cycle from the ISA) or the vendor's dense figure by GPU name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tbd {

// $TBD_CACHE_DIR/peak.json, else $XDG_CACHE_HOME/tbd/peak.json, else ~/.cache/tbd/peak.json.
std::string peak_cache_path();

// What a measurement is valid for: host, processor or GPU name, device,
// intra-op threads and LibTorch version. A change of any of them needs a new one.
std::string peak_machine_key(c10::Device device, int threads);

struct GemmPeakOptions {
  int64_t size = 0;             // n of the n×n×n GEMM; 0: 2048 on CPU, 8192 on GPUs
  double trial_seconds = 0.25;  // each trial repeats the GEMM at least this long
  int min_trials = 5, max_trials = 15;
  double target_cv = 0.03;  // more trials until the trials' CV is below this
};

// The precisions `tbd env --peak` measures: fp32 and bf16 on CPUs; fp32,
// tf32, bf16 and fp16 on CUDA devices.
std::vector<std::string> peak_dtypes(c10::Device device);

// Measures dtype ("fp32", "tf32", "bf16" or "fp16") GEMM FLOP/s on the device with the current
// thread setting. Returns {flops_per_s, dtype, gemm_n, trials, cv, ...} or
// {flops_per_s: null, not_available: reason}.
nlohmann::json measure_gemm_peak(c10::Device device, const std::string& dtype, const GemmPeakOptions& options = {});

// Reads and writes the cache; store merges into the file atomically.
std::optional<nlohmann::json> load_cached_peak(const std::string& key, const std::string& dtype);
void store_cached_peak(const std::string& key, const nlohmann::json& measurements);

// Datasheet / instruction-rate figure: {flops_per_s, provenance} or
// {flops_per_s: null, not_available: reason}.
nlohmann::json datasheet_peak(c10::Device device, const std::string& dtype, int threads);

// FLOPs per cycle per core of a CPU from its /proc/cpuinfo vendor, family and
// flags; 0 when unknown. `why` says which assumption was used.
double cpu_flops_per_cycle(const std::string& vendor, int family, const std::string& flags, const std::string& dtype,
                           std::string& why);
// Dense FLOP/s of a known NVIDIA GPU (by name) for fp32, tf32, bf16, fp16; 0 when unknown.
double gpu_datasheet_flops(const std::string& name, const std::string& dtype);

// The figure a run uses: both peaks for the run's device, threads and dtype.
nlohmann::json peaks_for_run(c10::Device device, int threads, const std::string& dtype);

}  // namespace tbd
