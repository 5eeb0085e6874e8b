#include "tbd/report/study_documents.h"

#include "tbd/report/json_fields.h"

namespace tbd {

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
