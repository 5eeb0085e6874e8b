#include "tbd/measure/ops/kernel_summary.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tbd {
namespace {

// Length of the union of [start, end) intervals, in seconds: kernels on
// several streams overlap, and busy time must count an instant once.
double union_seconds(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t total = 0, begin = 0, end = 0;
  bool open = false;
  for (const auto& [a, b] : spans) {
    if (open && a <= end) {
      end = std::max(end, b);
      continue;
    }
    if (open) total += end - begin;
    begin = a, end = b, open = true;
  }
  if (open) total += end - begin;
  return static_cast<double>(total) * 1e-9;
}

}  // namespace

nlohmann::json summarize_kernels(const std::vector<DeviceActivity>& activities, double wall_s, int iterations,
                                 size_t top) {
  struct PerName {
    int64_t calls = 0;
    double seconds = 0;
  };
  std::map<std::string, PerName> by_name;
  std::vector<std::pair<uint64_t, uint64_t>> kernel_spans;
  double kernel_s = 0, memcpy_s = 0, memset_s = 0;
  int64_t kernels = 0;
  for (const auto& a : activities) {
    if (a.end_ns < a.start_ns) continue;
    const double d = static_cast<double>(a.end_ns - a.start_ns) * 1e-9;
    switch (a.kind) {
      case DeviceActivity::Kind::kernel:
        kernel_spans.emplace_back(a.start_ns, a.end_ns);
        kernel_s += d;
        ++kernels;
        by_name[a.name].calls += 1;
        by_name[a.name].seconds += d;
        break;
      case DeviceActivity::Kind::memcpy: memcpy_s += d; break;
      case DeviceActivity::Kind::memset: memset_s += d; break;
    }
  }
  if (kernels == 0 || wall_s <= 0 || iterations <= 0)
    return {{"kernel_busy_share", nullptr},
            {"not_available", kernels == 0 ? "the profile holds no device kernel (a CPU run, or Kineto saw no "
                                             "CUDA activity)"
                                           : "the profiled iterations took no time"}};
  const double n = iterations;
  // Clamp: GPU and host clocks are aligned by Kineto only to within microseconds.
  const double busy = std::min(1.0, union_seconds(kernel_spans) / wall_s);
  std::vector<std::pair<std::string, PerName>> ranked(by_name.begin(), by_name.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return x.second.seconds > y.second.seconds; });
  nlohmann::json top_kernels = nlohmann::json::array();
  for (size_t i = 0; i < ranked.size() && i < top; ++i) {
    const auto& [name, k] = ranked[i];
    top_kernels.push_back({{"name", name},
                           {"calls_per_iteration", static_cast<double>(k.calls) / n},
                           {"seconds_per_iteration", k.seconds / n},
                           {"mean_us", k.seconds / static_cast<double>(k.calls) * 1e6},
                           {"share_of_kernel_time", k.seconds / kernel_s}});
  }
  return {{"iterations", iterations},
          {"wall_s", wall_s},
          {"kernel_busy_share", busy},
          {"kernel_seconds_per_iteration", kernel_s / n},
          {"kernels_per_iteration", static_cast<double>(kernels) / n},
          {"distinct_kernels", by_name.size()},
          {"memcpy_seconds_per_iteration", memcpy_s / n},
          {"memset_seconds_per_iteration", memset_s / n},
          {"top_kernels", top_kernels},
          {"definition",
           "kernel_busy_share = length of the union of kernel intervals / wall time of the "
           "profiled iterations (Kineto CUDA activity); the profiled iterations run after the "
           "measured windows"}};
}

}  // namespace tbd
