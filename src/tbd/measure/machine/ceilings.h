// The machine's ceilings besides the GEMM peak (docs/metrics.md#ceilings),
// measured by `tbd env --peak` and cached beside the peaks:
//  - memory bandwidth: STREAM's copy (b = a) and triad (a = b + s·c) through
//    ATen on arrays far larger than the caches, bytes read plus written per second;
//  - dispatch overhead: the time one tiny operator takes end to end (a tight
//    loop of 1-element adds), the floor under any operator's time.
// The roofline (roofline.h) judges operators against them.
#pragma once

#include <optional>
#include <string>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tbd {

struct BandwidthOptions {
  int64_t elements = 0;         // per array; 0: 2^25 fp32 (128 MiB) on CPUs, 2^28 (1 GiB) on GPUs
  double trial_seconds = 0.25;  // each trial repeats the kernel at least this long
  int min_trials = 5, max_trials = 15;
  double target_cv = 0.03;
};

// {bytes_per_s (the better of copy and triad: the ceiling), copy_bytes_per_s,
// triad_bytes_per_s, array_bytes, trials, cv, provenance, measured_utc}.
nlohmann::json measure_memory_bandwidth(c10::Device device, const BandwidthOptions& options = {});

// {seconds_per_op, ops, provenance, measured_utc}: the median per-op time of
// trials of `ops` 1-element at::add_out calls (on GPUs: until the queue drains).
nlohmann::json measure_dispatch_overhead(c10::Device device, int64_t ops = 20000);

// The cached figure `name` ("memory_bandwidth" or "dispatch_overhead") for a
// machine key (peak_machine_key), when `field` in it is a number.
std::optional<nlohmann::json> load_cached_ceiling(const std::string& key, const std::string& name,
                                                  const std::string& field);

// What a run compares against: {gemm: peaks_for_run's measured peak,
// memory_bandwidth, dispatch_overhead}, each a measurement or
// {not_available: why}.
nlohmann::json ceilings_for_run(c10::Device device, int threads, const std::string& dtype);

}  // namespace tbd
