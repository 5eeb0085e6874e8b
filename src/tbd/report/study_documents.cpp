#include "tbd/report/study_documents.h"

#include "tbd/report/json_fields.h"
#include "tbd/report/result_document.h"

namespace tbd {
namespace {
using namespace fields::rules;

constexpr fields::FieldRule kSweepRules[] = {
    {"workload", string},
    {"stopped_by", string},
    {"largest_fitting_batch", or_null(positive_integer)},  // null: nothing fitted
    {"memory_limit_bytes", or_null(count)},
    {"memory_limit_source", string},
    {"run_options", array},
    {"run_options[]", string},
    {"environment", object},
    {"points", required(array)},
    {"points[]", object},
    {"points[].batch_size", required(positive_integer)},
    {"points[].status", required(string)},
    {"points[].file", string},
    {"points[].error", string},
    {"points[].unit", string},
    {"points[].samples_per_s", or_null(non_negative)},
    {"points[].median_iteration_s", or_null(non_negative)},
    {"points[].cpu_utilisation", or_null(non_negative)},
    {"points[].flops_utilisation", or_null(non_negative)},
    {"points[].peak_memory_bytes", or_null(integer)},  // -1: no memory probe
};

constexpr fields::FieldRule kSuiteRules[] = {
    {"preset", string},
    {"created_utc", string},
    {"updated_utc", string},
    {"run_options", array},
    {"run_options[]", string},
    {"environment", object},
    {"runs", required(array)},
    {"runs[]", object},
    {"runs[].workload", required(string)},
    {"runs[].status", required(string)},
    {"runs[].file", string},
    {"runs[].log", string},
    {"runs[].options", array},
    {"runs[].options[]", string},
    {"runs[].error", string},
    {"runs[].seconds", non_negative},
    {"runs[].exit_status", integer},
    {"runs[].started_utc", string},
};

constexpr fields::FieldRule kScaleRules[] = {
    {"workload", string},
    {"unit", string},
    {"baseline_nproc", positive_integer},
    {"environment", object},
    {"points", required(array)},
    {"points[]", object},
    {"points[].nproc", required(positive_integer)},
    {"points[].samples_per_s", non_negative},
    {"points[].speedup", non_negative},
    {"points[].efficiency", non_negative},
    {"points[].result", required(object)},
};

}  // namespace

std::span<const fields::FieldRule> sweep_rules() { return kSweepRules; }
std::span<const fields::FieldRule> suite_rules() { return kSuiteRules; }
std::span<const fields::FieldRule> scale_rules() { return kScaleRules; }

void check_sweep_document(const nlohmann::json& doc, const std::string& file) {
  fields::check_fields(doc, kSweepRules, file);
}

void check_suite_document(const nlohmann::json& doc, const std::string& file) {
  fields::check_fields(doc, kSuiteRules, file);
}

void check_scale_document(const nlohmann::json& doc, const std::string& file) {
  fields::check_fields(doc, kScaleRules, file);
  for (const auto& p : fields::array(doc, {"points"}))
    check_result_document(p["result"], file + " (point nproc " + p["nproc"].dump() + ")");
}

SweepDocument read_sweep_document(const nlohmann::json& doc) {
  SweepDocument d;
  d.workload = fields::string(doc, {"workload"}).value_or("?");
  d.stopped_by = fields::string(doc, {"stopped_by"}).value_or("");
  d.largest_fitting = fields::integer(doc, {"largest_fitting_batch"});
  for (const auto& p : fields::array(doc, {"points"})) {
    d.points.push_back({fields::integer(p, {"batch_size"}).value_or(0), fields::string(p, {"status"}).value_or("?"),
                        fields::string(p, {"error"}).value_or("")});
  }
  return d;
}

SuiteDocument read_suite_document(const nlohmann::json& doc) {
  SuiteDocument d;
  for (const auto& r : fields::array(doc, {"runs"}))
    d.runs.push_back({fields::string(r, {"workload"}).value_or("?"), fields::string(r, {"status"}).value_or("?"),
                      fields::string(r, {"error"}).value_or("")});
  return d;
}

ScaleDocument read_scale_document(const nlohmann::json& doc) {
  ScaleDocument d;
  d.workload = fields::string(doc, {"workload"}).value_or("?");
  d.unit = fields::string(doc, {"unit"}).value_or("samples/s");
  const auto& points = fields::array(doc, {"points"});
  if (!points.empty())
    d.configuration = {fields::string(points[0], {"result", "workload", "options", "scale"}).value_or("?"),
                       fields::integer(points[0], {"result", "workload", "options", "batch_size"}).value_or(0)};
  for (const auto& p : points)
    d.points.push_back({fields::integer(p, {"nproc"}).value_or(0), fields::number_or_nan(p, {"samples_per_s"}),
                        fields::number_or_nan(p, {"speedup"}), fields::number_or_nan(p, {"efficiency"})});
  return d;
}

}  // namespace tbd
