#include "tbd/measure/probes/flops_probe.h"

#include <fmt/format.h>

#include "tbd/core/recomputation.h"
#include "tbd/core/workload.h"
#include "tbd/measure/machine/peak.h"
#include "tbd/measure/ops/flop_rules.h"

namespace tbd {
namespace {

// Depth of ops with a rule on this thread; only depth 0 → 1 is counted.
thread_local int t_flop_rule_depth = 0;

struct FlopRuleFrame : at::ObserverContext {};

// std::atomic<double>::fetch_add is C++20; this is the C++17 equivalent.
void add(std::atomic<double>& a, double v) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

std::unique_ptr<at::ObserverContext> flops_on_start(const at::RecordFunction& fn, FlopTally* tally) {
  const char* name = fn.name();
  if (!has_flop_rule(name)) return nullptr;
  if (t_flop_rule_depth++ == 0 && tally && tally->counting.load(std::memory_order_relaxed)) {
    const OpCost cost = flop_cost(name, fn.inputs());
    const int bucket = tally->phase.load(std::memory_order_relaxed);
    add(tally->flops[bucket], cost.flops);
    if (cost.bytes > 0) add(tally->bytes[bucket], cost.bytes);
    if (RecomputationScope::active()) add(tally->recomputed, cost.flops);
    std::lock_guard<std::mutex> lock(tally->mutex);
    tally->by_op[name] += cost.flops;
  }
  return std::make_unique<FlopRuleFrame>();
}

void flops_on_end(const at::RecordFunction&, at::ObserverContext* ctx, FlopTally*) {
  if (ctx) --t_flop_rule_depth;
}

// Why a utilisation can pass 100%, said next to it rather than hidden.
std::string above_peak_reason(const nlohmann::json& peak) {
  if (peak.value("clock_basis", std::string()) == "reported")
    return "this peak assumes the clock /proc/cpuinfo reports, not the maximum boost clock (cpufreq is not "
           "readable here), and the cores ran faster than that";
  if (peak.contains("measured_utc"))
    return "the GEMM that measured this peak ran slower than this workload's kernels (different shapes or "
           "clocks); re-measure with tbd env --peak";
  return "the peak's assumptions (clock, FMA units) understate this machine";
}

std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 6) v /= 1000, ++i;
  return fmt::format("{:.4g} {}{}", v, prefixes[i], unit);
}

}  // namespace

void FlopsProbe::start() { observer_.start<flops_on_start, flops_on_end>({.inputs = true}, "flops probe"); }

double FlopsProbe::total_flops() const {
  double t = 0;
  for (std::size_t b = 0; b < FlopTally::kBuckets; ++b) t += flops(b);
  return t;
}

void FlopsProbe::on_run_start(const RunContext& ctx) {
  unit_ = ctx.info.sample_unit;
  dtype_ = to_string(ctx.options.precision);
  peaks_ = peaks_for_run(ctx.device, ctx.options.threads, dtype_);
}

namespace {

// The rate against each peak (measured, datasheet), or why not.
nlohmann::json utilization_of(double rate, const nlohmann::json& peaks) {
  nlohmann::json util = nlohmann::json::object();
  for (const char* kind : {"measured", "datasheet"}) {
    const auto& p = peaks.at(kind);
    if (p.at("flops_per_s").is_number() && rate > 0) {
      util[kind] = rate / p.at("flops_per_s").get<double>();
      if (util[kind].get<double>() > 1) util[std::string(kind) + "_above_100_percent"] = above_peak_reason(p);
    } else
      util[kind] = {{"value", nullptr},
                    {"not_available", p.value("not_available", std::string("no timed iteration completed"))}};
  }
  return util;
}

}  // namespace

void FlopsProbe::contribute(nlohmann::json& result) const {
  nlohmann::json f;
  f["unit"] = "FLOP (one multiply-add = 2), per measured iteration unless named otherwise";
  f["iterations"] = iterations_;
  f["counted_in"] = "instrumented iterations after the timed windows";
  f["dtype"] = dtype_;
  if (iterations_ == 0) {
    f["not_available"] = "no instrumented iteration completed (the run was interrupted, or --instrument-iters 0)";
    result["flops"] = f;
    return;
  }
  const double n = static_cast<double>(iterations_);
  const double hardware = total_flops(), model = model_flops();
  double bytes = 0;
  for (std::size_t b = 0; b < FlopTally::kBuckets; ++b) bytes += this->bytes(b);
  for (Phase p : kPhases) f[to_string(p)] = flops(phase_index(p)) / n;
  f["outside_phases"] = flops(kOutsidePhases) / n;
  f["recomputation"] = recomputed_flops() / n;
  f["per_iteration"] = model / n;
  f["hardware_per_iteration"] = hardware / n;
  const auto per_sample = [&](double v) { return samples_ > 0 ? nlohmann::json(v / samples_) : nlohmann::json(); };
  f["per_sample"] = per_sample(model);
  f["hardware_per_sample"] = per_sample(hardware);
  f["sample_unit"] = unit_;
  f["total"] = hardware;
  f["instrumented_seconds"] = seconds_;
  // FLOPs per sample (instrumented) × samples per second (timed windows).
  const double rate = achieved(model), hardware_rate = achieved(hardware);
  f["achieved_flops_per_s"] = rate > 0 ? nlohmann::json(rate) : nlohmann::json(nullptr);
  f["hardware_achieved_flops_per_s"] = hardware_rate > 0 ? nlohmann::json(hardware_rate) : nlohmann::json(nullptr);
  if (rate <= 0) f["achieved_not_available"] = "no timed iteration completed";
  f["embedding_bag_bytes"] = bytes / n;
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, v] : stats()) ops[op] = v / n;
  f["by_op"] = ops;
  f["peak"] = peaks_;
  f["utilization"] = utilization_of(rate, peaks_);                    // MFU
  f["hardware_utilization"] = utilization_of(hardware_rate, peaks_);  // HFU
  result["flops"] = f;
}

double FlopsProbe::achieved(double flops) const {
  if (samples_ <= 0) return 0;
  return flops / samples_ * timed_.samples_per_s();
}

std::vector<std::pair<std::string, std::string>> FlopsProbe::summary_lines() const {
  if (iterations_ == 0 || samples_ <= 0) return {{"FLOPs", "n/a (no instrumented iteration completed)"}};
  const double model = model_flops(), recomputed = recomputed_flops();
  const double n = static_cast<double>(iterations_);
  const double rate = achieved(model), hardware_rate = achieved(total_flops());
  std::vector<std::pair<std::string, std::string>> lines;
  lines.push_back({"FLOPs", fmt::format("{} per sample ({}); {} per iteration: forward {}, backward {}, optimizer {}",
                                        si(model / samples_, "FLOP"), unit_, si(model / n, "FLOP"),
                                        si(flops(phase_index(Phase::forward)) / n, "FLOP"),
                                        si((flops(phase_index(Phase::backward)) - recomputed) / n, "FLOP"),
                                        si(flops(phase_index(Phase::optimizer)) / n, "FLOP"))});
  if (recomputed > 0)
    lines.push_back({"recomputed", fmt::format("{} per iteration re-run in backward by activation checkpointing "
                                               "(hardware FLOPs {} per iteration; model FLOPs above exclude it)",
                                               si(recomputed / n, "FLOP"), si(total_flops() / n, "FLOP"))});
  if (rate <= 0) return lines;
  lines.push_back({"achieved", si(rate, "FLOP/s") + " (FLOPs per sample × timed samples/s)"});
  for (const char* kind : {"measured", "datasheet"}) {
    const auto& p = peaks_.at(kind);
    if (p.at("flops_per_s").is_number()) {
      const double peak = p.at("flops_per_s").get<double>();
      const std::string source = std::string(kind) == "measured"
                                     ? "tbd env --peak, " + p.value("measured_utc", std::string("?"))
                                     : p.value("provenance", std::string());
      lines.push_back({"% of peak", fmt::format("{:.1f}% of {} peak {} {} ({})", 100 * rate / peak, kind,
                                                si(peak, "FLOP/s"), dtype_, source)});
      if (recomputed > 0)
        lines.push_back({"", fmt::format("HFU {:.1f}% (hardware FLOPs, recomputation included; the line above is "
                                         "MFU, model FLOPs)",
                                         100 * hardware_rate / peak)});
      if (rate > peak) lines.push_back({"", "above 100%: " + above_peak_reason(p)});
    } else {
      lines.push_back(
          {"% of peak", std::string(kind) + " peak: n/a (" + p.value("not_available", std::string("unknown")) + ")"});
    }
  }
  return lines;
}

}  // namespace tbd
