#include "tbd/report/prediction_document.h"

#include <cmath>

#include "tbd/report/json_fields.h"

namespace tbd {
namespace {
using namespace fields::rules;

constexpr fields::FieldRule kPredictionRules[] = {
    {"base", string},
    {"base_label", string},
    {"predictions", required(array)},
    {"predictions[]", object},
    {"predictions[].kind", required(string)},
    {"predictions[].unit", string},
    {"predictions[].ranks", positive_integer},
    {"predictions[].global_samples_per_s", non_negative},
    {"predictions[].per_rank_samples_per_s", non_negative},
    {"predictions[].efficiency", non_negative},
    {"predictions[].speedup", non_negative},
    // A number for class_speedup and roofline; data_parallel's terms for data_parallel.
    {"predictions[].iteration_ms.*", non_negative},
    {"predictions[].sparse_allreduce_ms", non_negative},
    {"predictions[].replayed_exposed_ms", non_negative},
    {"predictions[].communication_source", string},
    {"predictions[].classes", array},
    {"predictions[].classes[]", object},
    {"predictions[].classes[].class", string},
    {"predictions[].classes[].factor", positive},
    {"predictions[].samples_per_s", non_negative},
    {"predictions[].base_iteration_ms", non_negative},
    {"predictions[].limit_bytes", non_negative},
    {"predictions[].fixed_bytes", non_negative},
    {"predictions[].per_sample_bytes", non_negative},
    {"predictions[].largest_fitting_batch", or_null(integer)},
    {"predictions[].first_out_of_memory_doubling", or_null(integer)},
    {"predictions[].sharding", string},
    {"predictions[].embedding_sharding", string},
    {"predictions[].embedding_all_to_all_bytes", non_negative},
    {"predictions[].peak_bytes_per_rank", non_negative},
    {"predictions[].model_state_bytes_per_rank", object},
    {"predictions[].model_state_bytes_per_rank.*", non_negative},
    {"predictions[].gathered_bytes", non_negative},
    {"predictions[].device_memory_bytes", positive_integer},
    {"predictions[].fits", boolean},
    {"predictions[].fewest_ranks_that_fit", or_null(positive_integer)},
    {"predictions[].check", object},
    {"predictions[].check.not_available", string},
    {"predictions[].check.measured_global_samples_per_s", non_negative},
    {"predictions[].check.error", number},
    {"predictions[].check.result", string},
    {"predictions[].check.runs", array},
    {"predictions[].check.measured_process_cv", or_null(number)},
    {"predictions[].check.measured_repetition_cv", or_null(number)},
    {"predictions[].check.sweep", string},
    {"predictions[].check.measured_first_out_of_memory_batch", or_null(integer)},
    {"predictions[].check.doubling_steps_off", or_null(number)},
    {"predictions[].check.measured_peak_bytes_per_rank", non_negative},
    {"predictions[].check.peak_error", number},
    {"predictions[].check.model_state_error", or_null(number)},
};

PredictionKind prediction_kind(const std::string& name) {
  if (name == "data_parallel") return PredictionKind::kDataParallel;
  if (name == "class_speedup") return PredictionKind::kClassSpeedup;
  if (name == "roofline") return PredictionKind::kRoofline;
  if (name == "memory_limit") return PredictionKind::kMemoryLimit;
  if (name == "sharded_memory") return PredictionKind::kShardedMemory;
  return PredictionKind::kUnknown;
}

PredictionCheck read_check(const nlohmann::json& c) {
  using fields::number_or_nan;
  PredictionCheck check;
  // The kinds as predict writes them: a reason, a measured run (it has an
  // error), otherwise a memory sweep.
  if (fields::find(c, {"not_available"})) {
    check.not_available = fields::text(c, {"not_available"}).value_or("");
  } else if (fields::find(c, {"peak_error"})) {
    check.kind = PredictionCheck::Kind::kShardedRun;
    check.measured_peak_bytes = number_or_nan(c, {"measured_peak_bytes_per_rank"});
    check.peak_error = number_or_nan(c, {"peak_error"});
    check.model_state_error = fields::number(c, {"model_state_error"});
    check.measured_global_samples_per_s = number_or_nan(c, {"measured_global_samples_per_s"});
    check.result = fields::string(c, {"result"}).value_or("");
  } else if (fields::find(c, {"error"})) {
    check.kind = PredictionCheck::Kind::kMeasuredRun;
    check.measured_global_samples_per_s = number_or_nan(c, {"measured_global_samples_per_s"});
    check.error = number_or_nan(c, {"error"});
    check.result = fields::string(c, {"result"}).value_or("");
    check.runs = fields::array(c, {"runs"}).size();
    check.process_cv = fields::number(c, {"measured_process_cv"});
    check.repetition_cv = fields::number(c, {"measured_repetition_cv"});
  } else {
    check.kind = PredictionCheck::Kind::kMemorySweep;
    check.sweep = fields::string(c, {"sweep"}).value_or("");
    check.measured_first_out_of_memory_batch = fields::integer(c, {"measured_first_out_of_memory_batch"});
    check.doubling_steps_off = fields::number(c, {"doubling_steps_off"});
  }
  return check;
}

Prediction read_prediction(const nlohmann::json& p) {
  using fields::number_or_nan;
  Prediction r;
  r.kind = prediction_kind(fields::string(p, {"kind"}).value_or(""));
  r.unit = fields::string(p, {"unit"}).value_or("samples/s");
  r.ranks = static_cast<int>(fields::integer(p, {"ranks"}).value_or(0));
  r.global_samples_per_s = number_or_nan(p, {"global_samples_per_s"});
  r.per_rank_samples_per_s = number_or_nan(p, {"per_rank_samples_per_s"});
  r.efficiency = number_or_nan(p, {"efficiency"});
  r.speedup = number_or_nan(p, {"speedup"});
  const auto ms = [&](const char* term) { return number_or_nan(p, {"iteration_ms", term}); };
  r.step_ms = {ms("data"),          ms("forward"),   ms("backward"), ms("communication_exposed"),
               ms("bucket_copies"), ms("optimizer"), ms("other"),    ms("straggler"),
               ms("total")};
  r.rank_phases = fields::text(p, {"rank_phases"}).value_or("");
  r.allreduce = fields::text(p, {"allreduce"}).value_or("");
  r.sparse_allreduce_ms = fields::number(p, {"sparse_allreduce_ms"}).value_or(0);
  r.embedding_sharding = fields::string(p, {"embedding_sharding"}).value_or("");
  r.embedding_placement_ms = fields::number(p, {"iteration_ms", "embedding_placement"}).value_or(0);
  r.embedding_placement_source = fields::text(p, {"embedding_placement_source"}).value_or("");
  r.communication_source = fields::string(p, {"communication_source"}).value_or("");
  r.replayed_exposed_ms = number_or_nan(p, {"replayed_exposed_ms"});
  for (const auto& c : fields::array(p, {"classes"}))
    r.classes.push_back({fields::string(c, {"class"}).value_or("?"), fields::number(c, {"factor"}).value_or(0)});
  r.samples_per_s = number_or_nan(p, {"samples_per_s"});
  r.base_iteration_ms = number_or_nan(p, {"base_iteration_ms"});
  r.iteration_ms = number_or_nan(p, {"iteration_ms"});  // a number for these kinds (data-parallel: the terms)
  r.limit_bytes = number_or_nan(p, {"limit_bytes"});
  r.fixed_bytes = number_or_nan(p, {"fixed_bytes"});
  r.per_sample_bytes = number_or_nan(p, {"per_sample_bytes"});
  r.largest_fitting_batch = fields::integer(p, {"largest_fitting_batch"});
  r.first_out_of_memory_doubling = fields::integer(p, {"first_out_of_memory_doubling"});
  r.sharding = fields::string(p, {"sharding"}).value_or("");
  r.peak_bytes_per_rank = number_or_nan(p, {"peak_bytes_per_rank"});
  r.model_state_bytes_per_rank = number_or_nan(p, {"model_state_bytes_per_rank", "total"});
  r.gathered_bytes = number_or_nan(p, {"gathered_bytes"});
  r.device_memory_bytes = fields::integer(p, {"device_memory_bytes"});
  r.fewest_ranks_that_fit = fields::integer(p, {"fewest_ranks_that_fit"});
  r.fits = fields::boolean(p, {"fits"});
  if (const auto* c = fields::find(p, {"check"})) r.check = read_check(*c);
  return r;
}

}  // namespace

std::span<const fields::FieldRule> prediction_rules() { return kPredictionRules; }

void check_prediction_document(const nlohmann::json& doc, const std::string& file) {
  fields::check_fields(doc, kPredictionRules, file);
}

PredictionDocument read_prediction_document(const nlohmann::json& doc) {
  PredictionDocument d;
  d.base = fields::string(doc, {"base"}).value_or("?");
  d.base_label = fields::string(doc, {"base_label"}).value_or("?");
  for (const auto& p : fields::array(doc, {"predictions"})) d.predictions.push_back(read_prediction(p));
  return d;
}

}  // namespace tbd
