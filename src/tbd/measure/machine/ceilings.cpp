#include "tbd/measure/machine/ceilings.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include "tbd/core/statistics.h"
#include "tbd/core/utc_time.h"
#include "tbd/measure/machine/device.h"
#include "tbd/measure/machine/peak.h"

namespace tbd {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds for `reps` calls of `kernel`, the device's queue drained.
template <class Kernel>
double time_reps(c10::Device device, int64_t reps, const Kernel& kernel) {
  synchronize(device);
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < reps; ++i) kernel();
  synchronize(device);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Trials of `reps` calls sized to trial_seconds until their rates agree
// (CV below target) or max_trials: the rates of `units` per call.
template <class Kernel>
std::vector<double> rates(c10::Device device, const BandwidthOptions& o, double units, const Kernel& kernel) {
  double one = time_reps(device, 1, kernel);  // first touch, thread pool, clocks
  one = std::min(one, time_reps(device, 1, kernel));
  const int64_t reps = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o.trial_seconds / std::max(one, 1e-9))));
  std::vector<double> r;
  while (static_cast<int>(r.size()) < o.max_trials) {
    r.push_back(units * static_cast<double>(reps) / time_reps(device, reps, kernel));
    if (static_cast<int>(r.size()) >= o.min_trials && summarize(r).cv < o.target_cv) break;
  }
  return r;
}

nlohmann::json not_available(const std::string& why) { return {{"not_available", why}}; }

}  // namespace

nlohmann::json measure_memory_bandwidth(c10::Device device, const BandwidthOptions& o) {
  const int64_t n = o.elements > 0 ? o.elements : (device.is_cpu() ? int64_t{1} << 25 : int64_t{1} << 28);
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor a = at::ones({n}, opts), b = at::ones({n}, opts), c = at::ones({n}, opts);
  const double array_bytes = 4.0 * static_cast<double>(n);
  // STREAM's counting: copy reads one array and writes one; triad reads two and writes one.
  const auto copy = rates(device, o, 2 * array_bytes, [&] { b.copy_(a); });
  const auto triad = rates(device, o, 3 * array_bytes, [&] { at::add_out(a, b, c, 3.0); });
  const Summary sc = summarize(copy), st = summarize(triad);
  const bool triad_better = st.median >= sc.median;
  return {{"bytes_per_s", std::max(sc.median, st.median)},
          {"copy_bytes_per_s", sc.median},
          {"triad_bytes_per_s", st.median},
          {"array_bytes", array_bytes},
          {"trials", copy.size() + triad.size()},
          {"cv", triad_better ? st.cv : sc.cv},
          {"threads", at::get_num_threads()},
          {"measured_utc", utc_now()},
          {"provenance", fmt::format("STREAM-style copy (b = a, 2 arrays moved) and triad (a = b + 3·c, 3 arrays) "
                                     "through ATen on {} fp32 arrays of {:.0f} MiB; median of each kind's trials, "
                                     "the better kind is the ceiling; measured by `tbd env --peak`",
                                     device.str(), array_bytes / (1 << 20))}};
}

nlohmann::json measure_dispatch_overhead(c10::Device device, int64_t ops) {
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor x = at::ones({1}, opts), y = at::ones({1}, opts), out = at::empty({1}, opts);
  BandwidthOptions o;
  o.trial_seconds = 0.1;
  // Rates of operators per second; the floor is their inverse.
  const auto r = rates(device, o, static_cast<double>(ops), [&] {
    for (int64_t i = 0; i < ops; ++i) at::add_out(out, x, y);
  });
  const Summary s = summarize(r);
  return {{"seconds_per_op", 1.0 / s.median},
          {"ops_per_trial_call", ops},
          {"cv", s.cv},
          {"measured_utc", utc_now()},
          {"provenance", fmt::format("median time of one 1-element at::add_out on {} in tight loops of {} "
                                     "(dispatcher, kernel selection and the kernel's fixed cost{}); measured by "
                                     "`tbd env --peak`",
                                     device.str(), ops, device.is_cuda() ? ", launch included" : "")}};
}

std::optional<nlohmann::json> load_cached_ceiling(const std::string& key, const std::string& name,
                                                  const std::string& field) {
  std::ifstream in(peak_cache_path());
  if (!in) return std::nullopt;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    const auto& m = doc.at("machines").at(key).at(name);
    if (!m.at(field).is_number()) return std::nullopt;
    return m;
  } catch (const std::exception&) {
    return std::nullopt;  // not measured, or a damaged cache: as if not measured
  }
}

nlohmann::json ceilings_for_run(c10::Device device, int threads, const std::string& dtype) {
  const std::string key = peak_machine_key(device, threads);
  std::string how = "run `tbd env --peak";
  how += device.is_cpu() ? " --threads " + std::to_string(threads) : " --device " + device.str();
  how += "`";
  nlohmann::json c;
  const nlohmann::json peaks = peaks_for_run(device, threads, dtype);
  // The measured GEMM rate is what the device achieves; the datasheet figure stands in without one.
  if (peaks["measured"].contains("flops_per_s") && peaks["measured"]["flops_per_s"].is_number())
    c["compute"] = {{"flops_per_s", peaks["measured"]["flops_per_s"]}, {"source", "measured " + dtype + " GEMM peak"}};
  else if (peaks["datasheet"].contains("flops_per_s") && peaks["datasheet"]["flops_per_s"].is_number())
    c["compute"] = {{"flops_per_s", peaks["datasheet"]["flops_per_s"]},
                    {"source", "datasheet " + dtype + " peak (no measured one: " + how + ")"}};
  else
    c["compute"] = not_available("no " + dtype + " peak for this machine: " + how);
  const auto bandwidth = load_cached_ceiling(key, "memory_bandwidth", "bytes_per_s");
  c["memory_bandwidth"] = bandwidth ? *bandwidth : not_available("no measured memory bandwidth: " + how);
  const auto dispatch = load_cached_ceiling(key, "dispatch_overhead", "seconds_per_op");
  c["dispatch_overhead"] = dispatch ? *dispatch : not_available("no measured dispatch overhead: " + how);
  return c;
}

}  // namespace tbd
