// A tbd.prediction/1 document (`tbd predict --out`) read into types: the one
// place the prediction kinds are told apart, for the report's predictions
// table and predict's own text (prediction_text). Fields that are missing or
// of another type read as absent (NaN, none, empty), never as an error;
// check_prediction_document, which every command runs on a document it
// loads, refuses such a document first.
#pragma once

#include <span>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/json_fields.h"

namespace tbd {

enum class PredictionKind { kDataParallel, kClassSpeedup, kRoofline, kMemoryLimit, kShardedMemory, kUnknown };

// The check `tbd predict --check` ran: a measured data-parallel run, a
// memory sweep, a sharded run's memory, or the reason none could run.
struct PredictionCheck {
  enum class Kind { kNotAvailable, kMeasuredRun, kMemorySweep, kShardedRun } kind = Kind::kNotAvailable;
  std::string not_available;  // kNotAvailable: why
  // kMeasuredRun: the measured global throughput (the mean over runs), the
  // prediction's relative error, the last run's file and the noise.
  double measured_global_samples_per_s = 0, error = 0;
  std::string result;
  size_t runs = 0;
  std::optional<double> process_cv, repetition_cv;
  // kMemorySweep: the sweep's index and where it first ran out of memory.
  std::string sweep;
  std::optional<long long> measured_first_out_of_memory_batch;
  std::optional<double> doubling_steps_off;
  // kShardedRun: rank 0's measured peak and the peak's error (its
  // throughput in measured_global_samples_per_s); the model state's error
  // where the run recorded one (none for --sharding none).
  double measured_peak_bytes = 0, peak_error = 0;
  std::optional<double> model_state_error;
};

// A data-parallel step's predicted ms per iteration, term by term.
struct PredictedIteration {
  double data = 0, forward = 0, backward = 0, communication_exposed = 0, bucket_copies = 0, optimizer = 0, other = 0,
         straggler = 0, total = 0;
};

struct ClassFactor {
  std::string name;  // "?" when absent
  double factor = 0;
};

// One prediction; the fields of kinds other than its own keep their defaults
// (NaN for figures).
struct Prediction {
  PredictionKind kind = PredictionKind::kUnknown;
  std::string unit = "samples/s";
  // kDataParallel
  int ranks = 0;
  double global_samples_per_s = 0, per_rank_samples_per_s = 0, efficiency = 0;
  PredictedIteration step_ms;
  std::string rank_phases, allreduce;
  double sparse_allreduce_ms = 0;  // 0: no sparse gradients
  // dlrm's tables placed across the ranks (table, row; "" or replicate: not):
  // the all-to-alls' time per iteration, and where it came from.
  std::string embedding_sharding, embedding_placement_source;
  double embedding_placement_ms = 0;
  // How the communication term was obtained ("measured in context" or
  // "replayed ..."; empty in older documents) and the replay's exposure
  // (NaN when absent).
  std::string communication_source;
  double replayed_exposed_ms = 0;
  // kDataParallel, kClassSpeedup, kRoofline: against the base.
  double speedup = 0;
  // kClassSpeedup, kRoofline
  std::vector<ClassFactor> classes;
  double samples_per_s = 0, base_iteration_ms = 0, iteration_ms = 0;
  // kMemoryLimit
  double limit_bytes = 0, fixed_bytes = 0, per_sample_bytes = 0;
  std::optional<long long> largest_fitting_batch, first_out_of_memory_doubling;  // none: null or absent
  // kShardedMemory (ranks as above): the strategy and the memory per rank.
  std::string sharding;
  double peak_bytes_per_rank = 0, model_state_bytes_per_rank = 0, gathered_bytes = 0;
  std::optional<long long> device_memory_bytes, fewest_ranks_that_fit;
  std::optional<bool> fits;
  std::optional<PredictionCheck> check;  // --check not asked
};

struct PredictionDocument {
  std::string base, base_label;  // the base result's file and configuration label ("?" when absent)
  std::vector<Prediction> predictions;
};

PredictionDocument read_prediction_document(const nlohmann::json& doc);

// The rules of tbd.prediction/1 (docs/schema) for the fields tbd reads.
std::span<const fields::FieldRule> prediction_rules();

// Throws Error naming `file`, the field and the rule where `doc` breaks them.
void check_prediction_document(const nlohmann::json& doc, const std::string& file);

}  // namespace tbd
