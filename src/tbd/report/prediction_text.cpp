#include "tbd/report/prediction_text.h"

#include <fmt/format.h>

#include <string>

#include "tbd/report/prediction_document.h"

namespace tbd {
namespace {

std::string batch_or_none(const std::optional<long long>& batch) { return batch ? std::to_string(*batch) : "none"; }

void print_data_parallel(std::ostream& os, const Prediction& p) {
  const auto& t = p.step_ms;
  const bool sharded = !p.sharding.empty() && p.sharding != "none";
  const bool placed = !p.embedding_sharding.empty() && p.embedding_sharding != "replicate";
  os << fmt::format("  {} ranks{}: {:.4g} {} global ({:.4g} per rank), speed-up {:.2f}, efficiency {:.0f}%\n", p.ranks,
                    sharded  ? ", --sharding " + p.sharding
                    : placed ? ", --embedding-sharding " + p.embedding_sharding
                             : std::string(),
                    p.global_samples_per_s, p.unit, p.per_rank_samples_per_s, p.speedup, 100 * p.efficiency);
  const bool in_context = p.communication_source == "measured in context";
  os << fmt::format(
      "    iteration {:.4g} ms = forward {:.3g} + backward {:.3g} + {} {:.3g} + "
      "{}bucket copies {:.3g} + optimizer {:.3g}{} + data/other {:.3g}\n",
      t.total, t.forward, t.backward,
      in_context ? "communication"
      : sharded  ? "exposed collectives"
                 : "exposed all-reduce",
      t.communication_exposed,
      placed ? fmt::format("embedding placement {:.3g} + ", p.embedding_placement_ms) : std::string(), t.bucket_copies,
      t.optimizer, sharded ? " (its shard)" : "", t.data + t.other);
  if (in_context)
    os << fmt::format(
        "    communication measured in context (the step's schedule on a stand-in, with and without it): "
        "{:.3g} ms; the replay of the {} timed alone exposes {:.3g} ms\n",
        t.communication_exposed, sharded ? "collectives" : "buckets", p.replayed_exposed_ms);
  os << "    each rank's step: " << p.rank_phases << "\n    " << (sharded ? "collectives" : "all-reduce") << ": "
     << p.allreduce << "; straggler " << fmt::format("{:.3g} ms", t.straggler) << "\n";
  if (placed)
    os << "    embedding tables placed " << p.embedding_sharding
       << "-wise: no sparse all-reduce; the lookups: " << p.embedding_placement_source << "\n";
  if (p.sparse_allreduce_ms > 0)
    os << fmt::format(
        "    sparse gradients (tables stacked) all-reduced when backward ends, beside the last bucket: {:.3g} ms{}\n",
        p.sparse_allreduce_ms, in_context ? " back to back" : "");
}

void print_faster_operators(std::ostream& os, const Prediction& p) {
  std::string what = "every operator at its roofline ceiling";
  if (p.kind == PredictionKind::kClassSpeedup) {
    what.clear();
    for (const auto& c : p.classes) what += (what.empty() ? "" : ", ") + fmt::format("{} {:g}x", c.name, c.factor);
  }
  os << fmt::format("  {}: {:.4g} {} (speed-up {:.2f}; iteration {:.4g} -> {:.4g} ms)\n", what, p.samples_per_s, p.unit,
                    p.speedup, p.base_iteration_ms, p.iteration_ms);
}

void print_memory_limit(std::ostream& os, const Prediction& p) {
  os << fmt::format(
      "  memory limit {:.1f} MiB: fixed {:.1f} MiB + {:.3g} MiB per sample -> largest batch {}, "
      "first doubling that does not fit {}\n",
      p.limit_bytes / 1048576, p.fixed_bytes / 1048576, p.per_sample_bytes / 1048576,
      batch_or_none(p.largest_fitting_batch), batch_or_none(p.first_out_of_memory_doubling));
}

void print_sharded_memory(std::ostream& os, const Prediction& p) {
  const double mib = 1048576;
  os << fmt::format("  {} ranks, --sharding {}: peak {:.1f} MiB per rank (model state {:.1f} MiB{})\n", p.ranks,
                    p.sharding, p.peak_bytes_per_rank / mib, p.model_state_bytes_per_rank / mib,
                    p.gathered_bytes > 0 ? fmt::format(", gathered units {:.1f} MiB", p.gathered_bytes / mib) : "");
  if (p.device_memory_bytes)
    os << fmt::format("    device of {:.1f} MiB: {}; fewest ranks that fit: {}\n",
                      static_cast<double>(*p.device_memory_bytes) / mib,
                      p.fits.value_or(false) ? "fits" : "does not fit", batch_or_none(p.fewest_ranks_that_fit));
}

void print_check(std::ostream& os, const PredictionCheck& c, const std::string& unit) {
  switch (c.kind) {
    case PredictionCheck::Kind::kNotAvailable: os << "    check: not available: " << c.not_available << "\n"; break;
    case PredictionCheck::Kind::kMeasuredRun:
      os << fmt::format("    check: measured {:.4g} {} ({}), prediction error {:+.1f}% ({})\n",
                        c.measured_global_samples_per_s, unit,
                        c.process_cv      ? fmt::format("mean of {} runs, CV {:.1f}%", c.runs, 100 * *c.process_cv)
                        : c.repetition_cv ? fmt::format("one run, repetition CV {:.1f}%", 100 * *c.repetition_cv)
                                          : std::string("one run"),
                        100 * c.error, c.result);
      break;
    case PredictionCheck::Kind::kMemorySweep:
      if (c.doubling_steps_off)
        os << fmt::format(
            "    check: tbd sweep ran out of memory first at batch {}; prediction {:+.0f} doubling steps off ({})\n",
            batch_or_none(c.measured_first_out_of_memory_batch), *c.doubling_steps_off, c.sweep);
      else
        os << "    check: the sweep found no out-of-memory batch (" << c.sweep << ")\n";
      break;
    case PredictionCheck::Kind::kShardedRun:
      os << fmt::format("    check: measured peak {:.1f} MiB per rank, prediction error {:+.1f}%{}; {:.4g} {} ({})\n",
                        c.measured_peak_bytes / 1048576, 100 * c.peak_error,
                        c.model_state_error ? fmt::format(", model state {:+.1f}%", 100 * *c.model_state_error) : "",
                        c.measured_global_samples_per_s, unit, c.result);
      break;
  }
}

}  // namespace

void print_prediction(std::ostream& os, const nlohmann::json& doc) {
  const PredictionDocument d = read_prediction_document(doc);
  os << "predictions for " << d.base_label << " (" << d.base << ")\n";
  for (const auto& p : d.predictions) {
    switch (p.kind) {
      case PredictionKind::kDataParallel: print_data_parallel(os, p); break;
      case PredictionKind::kClassSpeedup:
      case PredictionKind::kRoofline: print_faster_operators(os, p); break;
      case PredictionKind::kMemoryLimit: print_memory_limit(os, p); break;
      case PredictionKind::kShardedMemory: print_sharded_memory(os, p); break;
      case PredictionKind::kUnknown: break;
    }
    if (p.check) print_check(os, *p.check, p.unit);
  }
}

}  // namespace tbd
