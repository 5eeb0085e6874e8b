#include "tbd/predict/sharded_memory_model.h"

#include <algorithm>

#include "tbd/core/error.h"
#include "tbd/core/zero_memory.h"
#include "tbd/predict/sharded_step.h"

namespace tbd {

namespace {

// What the base measured: W and O from its memory breakdown at the peak
// (both alive through the whole step), the gradients at the peak (zero when
// the peak falls in forward), G from its gradient count.
struct Base {
  double peak = 0;
  double weights = 0, gradients_at_peak = 0, optimizer_state = 0;
  // A peak in backward before any gradient exists (the loss's gradients,
  // the head's backward: llama, gpt) falls before ZeRO-3 gathers its first
  // unit again; the forward's own peak then is the other candidate.
  bool peak_before_units_regather = false;
  double forward_peak = 0;  // the forward phase's peak (0: not recorded)
  double gradients = 0;     // bytes of every trainable parameter's gradient
  WrappingUnitBytes units;  // full only
  // full under bf16: the copies autocast kept of the units' parameters in
  // the base, which a rank does not make (its gathered ones are bf16).
  double autocast_copies = 0;
  double bucket_bytes = 0;  // --bucket-mb
};

Base read_base(const nlohmann::json& base, Sharding sharding, double bucket_bytes) {
  const auto& m = base.value("memory", nlohmann::json());
  if (!m.is_object() || !m.contains("breakdown") || !m.contains("peak_bytes") || !m["peak_bytes"].is_number())
    throw Error(
        "the base result has no memory breakdown: run it with the memory probe (it is in the default --probes "
        "list)");
  const auto& g = base.value("gradients", nlohmann::json());
  if (!g.is_object() || !g.contains("elements") || !g["elements"].is_array())
    throw Error("the base result has no gradients section: run it with the gradients probe (default --probes)");
  Base b;
  b.bucket_bytes = bucket_bytes;
  const auto& at_peak = m["breakdown"];
  b.peak = m["peak_bytes"].get<double>();
  b.weights = at_peak.value("weights", 0.0);
  b.gradients_at_peak = at_peak.value("weight_gradients", 0.0);
  b.optimizer_state = at_peak.value("optimizer_state", 0.0);
  const auto& phases = m.value("phase_peak_bytes", nlohmann::json());
  if (phases.is_object() && phases.contains("forward") && phases["forward"].is_number()) {
    b.forward_peak = phases["forward"].get<double>();
    b.peak_before_units_regather = phases.contains("backward") && phases["backward"].is_number() &&
                                   phases["backward"].get<double>() >= b.peak && b.gradients_at_peak == 0;
  }
  // Each trainable parameter's elements and element size (autocast keeps
  // fp32 weights and gradients).
  const auto& sizes = g.value("element_size", nlohmann::json());
  for (size_t k = 0; k < g["elements"].size(); ++k) {
    const double size = sizes.is_array() && k < sizes.size() && sizes[k].is_number() ? sizes[k].get<double>() : 4.0;
    b.gradients += g["elements"][k].get<double>() * size;
  }
  if (sharding == Sharding::full) {
    const auto& units = base.value("model", nlohmann::json()).value("wrapping_units", nlohmann::json());
    if (!units.is_object())
      throw Error(
          "the base result does not record the model's wrapping units (model.wrapping_units), which --sharding "
          "full gathers one at a time: its workload declares none, or it was written by an older tbd; rerun the "
          "base with this one");
    const double trainable = base.at("model").at("trainable_parameters").get<double>();
    b.units.count = units.at("count").get<long long>();
    b.units.root_share = trainable > 0 ? units.at("root_elements").get<double>() / trainable : 1;
    const UnitGathers gathers = unit_gathers(base);
    for (size_t u = 0; u < gathers.bytes.size(); ++u) {
      b.units.largest_unit = std::max(b.units.largest_unit, gathers.bytes[u]);
      b.units.largest_unit_gradients = std::max(b.units.largest_unit_gradients, gathers.gradient_bytes[u]);
    }
    b.autocast_copies = gathers.autocast_copies;
  }
  return b;
}

ShardedModelState sharded_state(const Base& b, int n, Sharding s) {
  return sharded_model_state({b.weights, b.gradients, b.optimizer_state}, b.units, n, s);
}

double peak_per_rank(const Base& b, int n, Sharding s) {
  const ShardedModelState m = sharded_state(b, n, s);
  const double gradients_at_peak = sharded_gradients_alive(b.gradients_at_peak, b.bucket_bytes, b.units, n, s);
  const double state_change = m.weights + m.optimizer_state - b.weights - b.optimizer_state;
  // Before the first gradient every autocast copy the base made is alive;
  // later, some are freed (not modelled: the prediction stays above).
  const double copies = b.gradients_at_peak == 0 ? b.autocast_copies : 0;
  if (b.peak_before_units_regather)
    return std::max(b.peak + state_change - copies, b.forward_peak + state_change + m.gathered - b.autocast_copies);
  return b.peak + state_change - b.gradients_at_peak + gradients_at_peak + m.gathered - copies;
}

}  // namespace

nlohmann::json predict_sharded_memory(const nlohmann::json& base, int ranks, Sharding sharding, long long device_bytes,
                                      double bucket_bytes) {
  const Base b = read_base(base, sharding, bucket_bytes);
  const ShardedModelState m = sharded_state(b, ranks, sharding);
  const double peak = peak_per_rank(b, ranks, sharding);
  nlohmann::json out = {
      {"kind", "sharded_memory"},
      {"ranks", ranks},
      {"sharding", to_string(sharding)},
      {"zero_stage", zero_stage(sharding)},
      {"base_peak_bytes", b.peak},
      {"base_at_peak",
       {{"weights", b.weights}, {"weight_gradients", b.gradients_at_peak}, {"optimizer_state", b.optimizer_state}}},
      {"model_state_bytes_per_rank",
       {{"weights", m.weights},
        {"gradients", m.gradients},
        {"optimizer_state", m.optimizer_state},
        {"total", m.total()}}},
      {"gathered_bytes", m.gathered},
      {"peak_bytes_per_rank", peak},
      // The throughput unit, for the check's measured figure.
      {"unit", base.value("throughput", nlohmann::json::object()).value("unit", std::string("samples/s"))},
      {"model",
       "ZeRO's model state per rank from the base's weights W, gradients G and optimizer state O: weights W "
       "(full: W_root + (W - W_root)/N + two units gathered), gradients G or G/N (gradients, full), optimizer "
       "state O/N (every strategy but none); peak per rank = the base's peak with its weights, gradients and "
       "optimizer state at the peak replaced by their sharded sizes (the gradients at the peak: up to three "
       "buckets whole, the rest 1/N); a backward peak before any gradient exists holds no gathered unit, and "
       "the forward's peak with two gathered is then the other candidate; under bf16, full gathers the units' "
       "linear weights in bf16 (half their bytes) and the copies autocast made of them in the base are taken "
       "off a peak before the first gradient"}};
  if (sharding == Sharding::full) out["autocast_copies_removed_bytes"] = b.autocast_copies;
  if (device_bytes > 0) {
    out["device_memory_bytes"] = device_bytes;
    out["fits"] = peak <= static_cast<double>(device_bytes);
    const auto fewest =
        fewest_ranks([&](int n) { return peak_per_rank(b, n, sharding) <= static_cast<double>(device_bytes); });
    out["fewest_ranks_that_fit"] = fewest ? nlohmann::json(*fewest) : nlohmann::json();
    if (!fewest)
      out["note"] =
          "what sharding does not divide (activations, workspace, the root's weights, the gathered "
          "units) exceeds the device at any number of ranks";
  }
  return out;
}

}  // namespace tbd
