#include "tbd/measure/probes/flops_probe.h"

#include <fmt/format.h>

#include "tbd/core/error.h"
#include "tbd/core/workload.h"
#include "tbd/measure/ops/flop_rules.h"
#include "tbd/measure/machine/peak.h"

namespace tbd {
namespace {

// Callbacks are plain function pointers: they reach the tally through this.
std::atomic<FlopTally*> g_tally{nullptr};
// Depth of ops with a rule on this thread; only depth 0 → 1 is counted.
thread_local int t_depth = 0;

struct Nested : at::ObserverContext {};

// std::atomic<double>::fetch_add is C++20; this is the C++17 equivalent.
void add(std::atomic<double>& a, double v) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (!has_flop_rule(name)) return nullptr;
  if (t_depth++ == 0) {
    FlopTally* tally = g_tally.load(std::memory_order_acquire);
    if (tally && tally->counting.load(std::memory_order_relaxed)) {
      const OpCost cost = flop_cost(name, fn.inputs());
      const int bucket = tally->phase.load(std::memory_order_relaxed);
      add(tally->flops[bucket], cost.flops);
      if (cost.bytes > 0) add(tally->bytes[bucket], cost.bytes);
      std::lock_guard<std::mutex> lock(tally->by_op_mutex);
      tally->by_op[name] += cost.flops;
    }
  }
  return std::make_unique<Nested>();
}

void on_op_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx) --t_depth;
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

FlopCounter::FlopCounter() : tally_(std::make_unique<FlopTally>()) {
  FlopTally* expected = nullptr;
  if (!g_tally.compare_exchange_strong(expected, tally_.get()))
    throw Error("only one FLOP counter can be active in a process at a time");
  handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(on_op_start, on_op_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

FlopCounter::~FlopCounter() {
  at::removeCallback(handle_);
  g_tally.store(nullptr);
}

double FlopCounter::total_flops() const {
  double t = 0;
  for (int b = 0; b < FlopTally::kBuckets; ++b) t += flops(b);
  return t;
}

void FlopsProbe::on_run_start(const RunContext& ctx) {
  unit_ = ctx.info.sample_unit;
  dtype_ = to_string(ctx.options.precision);
  peaks_ = peaks_for_run(ctx.device, ctx.options.threads, dtype_);
}

void FlopsProbe::on_window_begin(int) { counter_ = std::make_unique<FlopCounter>(); }

void FlopsProbe::on_iteration_begin(bool measured) {
  if (counter_) counter_->tally().counting = measured;
}

void FlopsProbe::on_iteration_end(const IterationRecord& r) {
  if (!counter_) return;
  counter_->tally().counting = false;
  if (!r.measured) return;
  ++iterations_;
  samples_ += static_cast<double>(r.samples);
  seconds_ += r.seconds;
}

void FlopsProbe::on_phase_begin(Phase p) {
  if (counter_) counter_->tally().phase = static_cast<int>(phase_index(p));
}

void FlopsProbe::on_phase_end(Phase) {
  if (counter_) counter_->tally().phase = kOutsidePhases;
}

void FlopsProbe::on_window_end(int) {
  if (!counter_) return;
  auto& t = counter_->tally();
  for (int b = 0; b < FlopTally::kBuckets; ++b) totals_[b] = t.flops[b].load(), bytes_[b] = t.bytes[b].load();
  {
    std::lock_guard<std::mutex> lock(t.by_op_mutex);
    by_op_ = t.by_op;
  }
  counter_.reset();  // removes the callback before the runner goes on
}

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
  double total = 0, bytes = 0;
  for (int b = 0; b < FlopTally::kBuckets; ++b) total += totals_[b], bytes += bytes_[b];
  for (Phase p : kPhases) f[to_string(p)] = totals_[phase_index(p)] / n;
  f["outside_phases"] = totals_[kOutsidePhases] / n;
  f["per_iteration"] = total / n;
  f["per_sample"] = samples_ > 0 ? nlohmann::json(total / samples_) : nlohmann::json(nullptr);
  f["sample_unit"] = unit_;
  f["total"] = total;
  f["instrumented_seconds"] = seconds_;
  // FLOPs per sample (instrumented) × samples per second (timed windows).
  const double rate = achieved();
  f["achieved_flops_per_s"] = rate > 0 ? nlohmann::json(rate) : nlohmann::json(nullptr);
  if (rate <= 0) f["achieved_not_available"] = "no timed iteration completed";
  f["embedding_bag_bytes"] = bytes / n;
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, v] : by_op_) ops[op] = v / n;
  f["by_op"] = ops;
  f["peak"] = peaks_;
  nlohmann::json util = nlohmann::json::object();
  for (const char* kind : {"measured", "datasheet"}) {
    const auto& p = peaks_.at(kind);
    if (p.at("flops_per_s").is_number() && rate > 0) {
      util[kind] = rate / p.at("flops_per_s").get<double>();
      if (util[kind].get<double>() > 1) util[std::string(kind) + "_above_100_percent"] = above_peak_reason(p);
    } else
      util[kind] = {{"value", nullptr},
                    {"not_available", p.value("not_available", std::string("no timed iteration completed"))}};
  }
  f["utilization"] = util;
  result["flops"] = f;
}

double FlopsProbe::achieved() const {
  double total = 0;
  for (double t : totals_) total += t;
  if (samples_ <= 0) return 0;
  return total / samples_ * timed_.samples_per_s();
}

std::vector<std::pair<std::string, std::string>> FlopsProbe::summary_lines() const {
  if (iterations_ == 0 || samples_ <= 0) return {{"FLOPs", "n/a (no instrumented iteration completed)"}};
  double total = 0;
  for (double t : totals_) total += t;
  const double n = static_cast<double>(iterations_);
  const double rate = achieved();
  std::vector<std::pair<std::string, std::string>> lines;
  lines.push_back({"FLOPs", fmt::format("{} per sample ({}); {} per iteration: forward {}, backward {}, optimizer {}",
                                        si(total / samples_, "FLOP"), unit_, si(total / n, "FLOP"),
                                        si(totals_[phase_index(Phase::forward)] / n, "FLOP"),
                                        si(totals_[phase_index(Phase::backward)] / n, "FLOP"),
                                        si(totals_[phase_index(Phase::optimizer)] / n, "FLOP"))});
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
      if (rate > peak) lines.push_back({"", "above 100%: " + above_peak_reason(p)});
    } else {
      lines.push_back(
          {"% of peak", std::string(kind) + " peak: n/a (" + p.value("not_available", std::string("unknown")) + ")"});
    }
  }
  return lines;
}

}  // namespace tbd
