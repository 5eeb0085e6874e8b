#include "tbd/measure/probes/time_probe.h"

#include <fmt/format.h>

#include "tbd/core/statistics.h"
#include "tbd/core/workload.h"

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
  phase_totals_.data_s += r.data_wait_s;
  for (int p = 0; p < 3; ++p) phase_totals_.phases.seconds[p] += r.phases.seconds[p];
  phase_totals_.phases.sync_s += r.phases.sync_s;
}

namespace {

struct RepetitionTotals {
  std::vector<double> samples, seconds, iterations;
};

RepetitionTotals per_repetition(const std::vector<double>& samples, const std::vector<double>& seconds,
                                const std::vector<int>& repetition) {
  RepetitionTotals t;
  const int reps = repetition.empty() ? 0 : repetition.back() + 1;
  t.samples.assign(reps, 0);
  t.seconds.assign(reps, 0);
  t.iterations.assign(reps, 0);
  for (size_t i = 0; i < seconds.size(); ++i) {
    t.samples[repetition[i]] += samples[i];
    t.seconds[repetition[i]] += seconds[i];
    t.iterations[repetition[i]] += 1;
  }
  return t;
}

}  // namespace

// Throughput and its interval: repetitions are the statistical unit (their
// totals as a ratio estimator); one repetition falls back on iterations,
// which understates run-to-run noise, and says so.
static TimeProbe::Rate rate_of(const RepetitionTotals& reps, const std::vector<double>& samples,
                               const std::vector<double>& seconds) {
  TimeProbe::Rate r;
  if (reps.seconds.size() >= 2) {
    r.estimate = ratio_of_totals(reps.samples, reps.seconds);
    r.interval_over = "repetitions";
    r.units = static_cast<int64_t>(reps.seconds.size());
  } else {
    r.estimate = ratio_of_totals(samples, seconds);
    r.interval_over = "iterations";
    r.units = static_cast<int64_t>(seconds.size());
  }
  return r;
}

TimeProbe::Rate TimeProbe::rate() const {
  return rate_of(per_repetition(samples_, seconds_, repetition_), samples_, seconds_);
}

// Where a timed iteration's time went, in ms per iteration (means, so the
// parts add up to the mean iteration time; docs/metrics.md#phases).
nlohmann::json TimeProbe::phase_section() const {
  if (device_ != "cpu")
    return {{"not_available", "on " + device_ +
                                  " the phases run asynchronously: the host's time in a phase is the "
                                  "time to queue its kernels, not theirs (see device_time and the gpu probe's kernel "
                                  "view)"}};
  if (seconds_.empty()) return {{"not_available", "no timed iteration completed"}};
  const double n = static_cast<double>(seconds_.size());
  double total = 0;
  for (double s : seconds_) total += s;
  const PhaseClock& p = phase_totals_.phases;
  const double ms = 1e3 / n;
  const double forward = p.of(Phase::forward), backward = p.of(Phase::backward) - p.sync_s,
               optimizer = p.of(Phase::optimizer);
  const double accounted = phase_totals_.data_s + forward + p.of(Phase::backward) + optimizer;
  return {{"unit", "ms per timed iteration (mean)"},
          {"iteration_ms", total * ms},
          {"data_ms", phase_totals_.data_s * ms},
          {"forward_ms", forward * ms},
          {"backward_ms", backward * ms},
          {"communication_ms", p.sync_s * ms},
          {"optimizer_ms", optimizer * ms},
          {"other_ms", std::max(0.0, total - accounted) * ms},
          {"definition",
           "host steady-clock time: data = waiting for next_batch(); forward, backward, optimizer = "
           "the workload's phase ranges; communication = the data-parallel gradient synchronisation "
           "that ends backward (not part of backward_ms); other = the rest of the iteration (loss "
           "computed outside a phase, the final synchronisation, harness)"}};
}

void TimeProbe::contribute(nlohmann::json& result) const {
  result["iterations"] = seconds_;
  result["iteration_samples"] = samples_;
  result["iteration_repetitions"] = repetition_;
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
    result["device_time"] = {{"n", d.n},
                             {"mean_s", d.mean},
                             {"median_s", d.median},
                             {"stddev_s", d.stddev},
                             {"min_s", d.min},
                             {"max_s", d.max},
                             {"definition",
                              "CUDA events recorded on the current stream when the iteration "
                              "starts and after its step was queued"}};
  } else {
    result["device_time"] = {{"mean_s", nullptr},
                             {"not_available", "device events exist only on CUDA; this run used " + device_}};
  }

  result["phases"] = phase_section();

  const RepetitionTotals totals = per_repetition(samples_, seconds_, repetition_);
  const Rate rate = rate_of(totals, samples_, seconds_);
  double total_samples = 0, total_seconds = 0;
  for (size_t i = 0; i < seconds_.size(); ++i) total_samples += samples_[i], total_seconds += seconds_[i];
  nlohmann::json throughput = {{"unit", unit_ + "/s"}, {"samples", total_samples}, {"seconds", total_seconds}};
  if (total_seconds > 0) {
    throughput["samples_per_s"] = rate.estimate.value;
    throughput["ci95"] = {rate.estimate.ci95_low, rate.estimate.ci95_high};
    throughput["ci95_over"] = rate.interval_over;
  } else {
    throughput["samples_per_s"] = nullptr;
    throughput["not_available"] = "no measured iteration completed";
  }
  // Per repetition: the unit of the interval and of `tbd compare`.
  nlohmann::json reps = nlohmann::json::array();
  std::vector<double> rates;
  for (size_t rep = 0; rep < totals.seconds.size(); ++rep) {
    const double n = totals.samples[rep], t = totals.seconds[rep];
    if (t > 0) rates.push_back(n / t);
    reps.push_back({{"iterations", static_cast<int64_t>(totals.iterations[rep])},
                    {"seconds", t},
                    {"samples", n},
                    {"samples_per_s", t > 0 ? nlohmann::json(n / t) : nlohmann::json(nullptr)}});
  }
  throughput["repetitions"] = reps;
  throughput["repetition_cv"] =
      rates.size() >= 2 ? nlohmann::json(stddev_of(rates) / mean_of(rates)) : nlohmann::json(nullptr);
  result["throughput"] = throughput;
}

std::vector<std::pair<std::string, std::string>> TimeProbe::summary_lines() const {
  if (seconds_.empty()) return {{"throughput", "not available: no measured iteration completed"}};
  const Summary s = summarize(seconds_);
  const Rate rate = this->rate();
  std::string ci;
  if (rate.units < 2)
    ci = "  (one iteration: no interval)";
  else if (rate.interval_over == "repetitions")
    ci = fmt::format("  (95% CI {:.4g} – {:.4g} across {} repetitions)", rate.estimate.ci95_low,
                     rate.estimate.ci95_high, rate.units);
  else
    ci = fmt::format(
        "  (95% CI {:.4g} – {:.4g} across iterations of one repetition: run-to-run noise not "
        "included; use --repeat)",
        rate.estimate.ci95_low, rate.estimate.ci95_high);
  std::vector<std::pair<std::string, std::string>> lines = {
      {"throughput", fmt::format("{:.4g} {}/s{}", rate.estimate.value, unit_, ci)},
      {"iteration", fmt::format("median {:.4g} ms  mean {:.4g} ms  sd {:.3g} ms  p5 {:.4g}  p95 {:.4g} ms  n={}",
                                s.median * 1e3, s.mean * 1e3, s.stddev * 1e3, s.p5 * 1e3, s.p95 * 1e3, s.n)},
  };
  if (!device_seconds_.empty()) {
    const Summary d = summarize(device_seconds_);
    lines.push_back(
        {"device time", fmt::format("median {:.4g} ms  mean {:.4g} ms (CUDA events)", d.median * 1e3, d.mean * 1e3)});
  }
  return lines;
}

}  // namespace tbd
