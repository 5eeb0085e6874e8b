#include "tbd/measure/time_probe.h"

#include <fmt/format.h>

#include "tbd/core/workload.h"
#include "tbd/measure/statistics.h"

namespace tbd {

void TimeProbe::on_run_start(const RunContext& ctx) {
  unit_ = ctx.info.sample_unit;
  device_ = ctx.device.str();
}

void TimeProbe::on_iteration_end(const IterationRecord& r) {
  if (!r.measured) return;
  seconds_.push_back(r.seconds);
  samples_.push_back(static_cast<double>(r.samples));
  repetition_.push_back(r.repetition);
  if (r.device_seconds) device_seconds_.push_back(*r.device_seconds);
}

void TimeProbe::contribute(nlohmann::json& result) const {
  result["iterations"] = seconds_;
  const Summary s = summarize(seconds_);
  nlohmann::json summary = {{"n", s.n}};
  if (s.n > 0) {
    summary.update({{"mean_s", s.mean},
                    {"median_s", s.median},
                    {"stddev_s", s.stddev},
                    {"min_s", s.min},
                    {"max_s", s.max},
                    {"p5_s", s.p5},
                    {"p95_s", s.p95},
                    {"ci95_mean_s", {s.ci95_low, s.ci95_high}},
                    {"cv", s.cv}});
  }
  result["summary"] = summary;

  // The same iterations timed on the device's stream by CUDA events: close
  // to the host figure when the GPU is the bottleneck; far below it when the
  // host (data, kernel launches) keeps the GPU waiting.
  if (!device_seconds_.empty()) {
    const Summary d = summarize(device_seconds_);
    result["device_time"] = {{"n", d.n},          {"mean_s", d.mean},     {"median_s", d.median},
                             {"stddev_s", d.stddev}, {"min_s", d.min},     {"max_s", d.max},
                             {"definition", "CUDA events recorded on the current stream when the iteration "
                                            "starts and after its step was queued"}};
  } else {
    result["device_time"] = {{"mean_s", nullptr},
                             {"not_available", "device events exist only on CUDA; this run used " + device_}};
  }

  const RatioEstimate rate = ratio_of_totals(samples_, seconds_);
  double total_samples = 0, total_seconds = 0;
  for (size_t i = 0; i < seconds_.size(); ++i) total_samples += samples_[i], total_seconds += seconds_[i];
  nlohmann::json throughput = {{"unit", unit_ + "/s"},
                               {"samples", total_samples},
                               {"seconds", total_seconds}};
  if (total_seconds > 0) {
    throughput["samples_per_s"] = rate.value;
    throughput["ci95"] = {rate.ci95_low, rate.ci95_high};
  } else {
    throughput["samples_per_s"] = nullptr;
    throughput["not_available"] = "no measured iteration completed";
  }
  // Per repetition, so drift between windows is visible.
  nlohmann::json reps = nlohmann::json::array();
  int max_rep = repetition_.empty() ? -1 : repetition_.back();
  for (int rep = 0; rep <= max_rep; ++rep) {
    double n = 0, t = 0;
    int64_t count = 0;
    for (size_t i = 0; i < seconds_.size(); ++i)
      if (repetition_[i] == rep) n += samples_[i], t += seconds_[i], ++count;
    reps.push_back({{"iterations", count}, {"seconds", t}, {"samples", n},
                    {"samples_per_s", t > 0 ? nlohmann::json(n / t) : nlohmann::json(nullptr)}});
  }
  throughput["repetitions"] = reps;
  result["throughput"] = throughput;
}

std::vector<std::pair<std::string, std::string>> TimeProbe::summary_lines() const {
  if (seconds_.empty()) return {{"throughput", "not available: no measured iteration completed"}};
  const Summary s = summarize(seconds_);
  const RatioEstimate rate = ratio_of_totals(samples_, seconds_);
  std::string ci = s.n >= 2 ? fmt::format("  (95% CI {:.4g} – {:.4g})", rate.ci95_low, rate.ci95_high)
                            : std::string("  (one iteration: no interval)");
  std::vector<std::pair<std::string, std::string>> lines = {
      {"throughput", fmt::format("{:.4g} {}/s{}", rate.value, unit_, ci)},
      {"iteration", fmt::format("median {:.4g} ms  mean {:.4g} ms  sd {:.3g} ms  p5 {:.4g}  p95 {:.4g} ms  n={}",
                                s.median * 1e3, s.mean * 1e3, s.stddev * 1e3, s.p5 * 1e3,
                                s.p95 * 1e3, s.n)},
  };
  if (!device_seconds_.empty()) {
    const Summary d = summarize(device_seconds_);
    lines.push_back({"device time", fmt::format("median {:.4g} ms  mean {:.4g} ms (CUDA events)", d.median * 1e3,
                                                d.mean * 1e3)});
  }
  return lines;
}

}  // namespace tbd
