// Every field of every kind of document tbd reads, given a wrong type: a
// real result of a tiny run, and the sweep, suite, scale and prediction
// documents tbd's studies build around such a result. Each mutation is
// loaded and used as `tbd report` (Markdown and HTML), `tbd compare` and
// `tbd predict` use it. The contract (issue 29):
//  - nothing but tbd::Error escapes (no JSON-library type_error, no abort);
//  - a refusal names the file and a field, never nlohmann's text;
//  - a field that its kind's rules describe (result_rules(), sweep_rules(),
//    ...: docs/schema) is refused when its type is wrong.
// Fields no rule describes (a probe's `definition`, the environment's
// details) may be accepted: readers ignore what they do not use.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "tbd/core/error.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/memory_model.h"
#include "tbd/predict/op_speedup_model.h"
#include "tbd/report/compare.h"
#include "tbd/report/prediction_document.h"
#include "tbd/report/report_model.h"
#include "tbd/report/result_document.h"
#include "tbd/report/result_set.h"
#include "tbd/report/shapes_document.h"
#include "tbd/report/study_documents.h"
#include "tbd/study/child_run.h"
#include "tbd/study/shapes.h"
#include "tbd/study/suite.h"
#include "tbd/study/sweep.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::TempDir;

// One real result: ncf at tiny scale with every probe the readers use.
const nlohmann::json& tiny_result() {
  static const nlohmann::json result = [] {
    RunOptions o;
    o.workload = "ncf";
    o.scale = Scale::tiny;
    o.iters = 2;
    o.warmup = 1;
    o.repeat = 2;
    o.quiet = true;
    return testing::run_registered(o, {"time", "data", "cpu", "flops", "memory", "ops", "roofline", "gradients"})
        .result;
  }();
  return result;
}

nlohmann::json sweep_document(const nlohmann::json& r) {
  const ChildOutcome ok;
  return {{"schema", kSweepSchema},
          {"workload", "ncf"},
          {"batch_sizes", {4}},
          {"memory_limit_bytes", nullptr},
          {"run_options", {"--scale", "tiny"}},
          {"points", {sweep_point(4, ok, r, MemoryLimit{}, "ncf-b4.json", "ncf-b4.log")}},
          {"largest_fitting_batch", 4},
          {"stopped_by", "the list of batch sizes"},
          {"environment", r["environment"]}};
}

nlohmann::json suite_document(const nlohmann::json& r) {
  const ChildOutcome ok;
  const nlohmann::json entry = {{"workload", "ncf"},
                                {"options", {"--scale", "tiny"}},
                                {"file", "ncf.json"},
                                {"log", "logs/ncf.log"},
                                {"started_utc", "2026-01-01T00:00:00Z"}};
  return {{"schema", kSuiteSchema},
          {"preset", "quick"},
          {"created_utc", "2026-01-01T00:00:00Z"},
          {"updated_utc", "2026-01-01T00:00:01Z"},
          {"run_options", {"--scale"}},
          {"environment", r["environment"]},
          {"runs", {finish_suite_entry(entry, ok, r)}}};
}

// As tbd scale writes it (study/scale.cpp), with one point.
nlohmann::json scale_document(const nlohmann::json& r) {
  return {{"schema", kScaleSchema},
          {"workload", "ncf"},
          {"unit", throughput_unit(r)},
          {"baseline_nproc", 1},
          {"points",
           {{{"nproc", 1}, {"samples_per_s", throughput_of(r)}, {"speedup", 1.0}, {"efficiency", 1.0}, {"result", r}}}},
          {"environment", r["environment"]}};
}

// Every prediction kind tbd predict makes, from the models themselves.
nlohmann::json prediction_document(const nlohmann::json& r) {
  DataParallelPlan plan;
  plan.allreduce_seconds = [](double bytes) { return bytes / 1e9; };
  nlohmann::json memory = predict_memory_limit(r, 1LL << 30);
  memory["check"] = {{"not_available", "not asked"}};
  nlohmann::json classes = predict_class_speedups(r, {{r["ops"]["by_class"].begin().key(), 2.0}});
  return {{"schema", kPredictionSchema},
          {"base", "base.json"},
          {"base_label", configuration_label(r)},
          {"predictions", {predict_data_parallel(r, plan), classes, predict_at_roofline(r), memory}}};
}

// A value of another JSON type than `v` has.
nlohmann::json wrong_type(const nlohmann::json& v) {
  if (v.is_number()) return "NaN";
  if (v.is_string()) return 7;
  if (v.is_array()) return 3;
  if (v.is_object()) return 5;
  if (v.is_boolean()) return "yes";
  return nlohmann::json::array();  // null
}

// Each field of `doc` by its name as the rules name it ("a.b[0].c"), with
// its JSON pointer: pointers, not addresses, because a mutation replaces a
// parent with a scalar and destroys its children (restoring it makes new
// ones). Of an array, its first two elements stand for all.
void collect(const nlohmann::json& node, const std::string& name, const nlohmann::json::json_pointer& at,
             std::vector<std::pair<std::string, nlohmann::json::json_pointer>>& out) {
  if (!name.empty()) out.push_back({name, at});
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) collect(value, name.empty() ? key : name + "." + key, at / key, out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size() && i < 2; ++i)
      collect(node[i], name + "[" + std::to_string(i) + "]", at / i, out);
  }
}

// What the commands do with a loaded set: report both formats, compare it
// with itself, and predict from each run with every model.
void use_like_the_commands(const ResultSet& set, const std::string& file) {
  const ReportModel model = build_report_model(set, file);
  render_markdown(model);
  render_html(model);
  if (!set.runs.empty()) compare_results(set, set, {}, file, file);  // a prediction alone has no runs to compare
  for (const auto& run : set.runs) {
    const auto* classes = fields::find(run.result, {"ops", "by_class"});
    const std::string cls = classes && classes->is_object() && !classes->empty() ? classes->begin().key() : "gemm";
    DataParallelPlan plan;
    plan.allreduce_seconds = [](double bytes) { return bytes / 1e9; };
    for (const std::function<void()>& predict : std::vector<std::function<void()>>{
             [&] { predict_data_parallel(run.result, plan); },
             [&] { predict_memory_limit(run.result, 1LL << 30); },
             [&] {
               predict_class_speedups(run.result, {{cls, 2.0}});
             },
             [&] { predict_at_roofline(run.result); },
             [&] { sparse_gradients_of(run.result); },
             [&] { bucket_bytes_of(run.result, 25); },
         }) {
      try {
        predict();
      } catch (const Error&) {  // a model's own refusal ("no gradient timeline", ...)
      }
    }
  }
}

// tbd shapes' document of two resnet50 layers at tiny scale, two counts each.
nlohmann::json shapes_document() {
  ShapesRequest r;
  r.options.workload = "resnet50";
  r.options.scale = Scale::tiny;
  r.options.batch_size = 2;
  r.options.quiet = true;
  r.layers = "^fc$|^layer1\\.0\\.conv1$";
  r.channels = "4,8";
  r.timing = {1, 2, 1};
  const auto workload = create_workload("resnet50");
  return run_shapes(r, *workload);
}

// The rule that describes `field` of a document of `kind`: a scale point's
// result is a result.
const fields::Rule* rule_of(const std::string& kind, const std::string& field) {
  if (kind == "result") return fields::rule_for(result_rules(), field);
  if (kind == "sweep") return fields::rule_for(sweep_rules(), field);
  if (kind == "suite") return fields::rule_for(suite_rules(), field);
  if (kind == "prediction") return fields::rule_for(prediction_rules(), field);
  if (kind == "shapes") return fields::rule_for(shapes_rules(), field);
  const std::string point = "points[0].result.";
  if (field.rfind(point, 0) == 0) return fields::rule_for(result_rules(), field.substr(point.size()));
  return fields::rule_for(scale_rules(), field);
}

void mutate_every_field(const std::string& kind, const nlohmann::json& original) {
  TempDir dir;
  const std::string file = dir / (kind + ".json");
  // The runs the sweep's and the suite's entries name, beside them.
  for (const char* run : {"ncf-b4.json", "ncf.json"}) std::ofstream(dir / run) << tiny_result().dump();
  // The document as it is loads and serves every command.
  std::ofstream(file) << original.dump();
  ASSERT_NO_THROW(use_like_the_commands(load_results(file), file)) << kind;

  nlohmann::json doc = original;
  std::vector<std::pair<std::string, nlohmann::json::json_pointer>> all;
  collect(doc, "", nlohmann::json::json_pointer(), all);
  size_t refused = 0;
  for (const auto& [field, at] : all) {
    nlohmann::json* node = &doc[at];
    if (field == "schema") continue;  // another schema is another kind of file (result_set's own test)
    const nlohmann::json kept = *node;
    *node = wrong_type(kept);
    std::ofstream(file, std::ios::trunc) << doc.dump();
    *node = kept;
    const fields::Rule* rule = rule_of(kind, field);
    SCOPED_TRACE(kind + " with " + field + " = " + wrong_type(kept).dump());
    try {
      const ResultSet set = load_results(file);
      // Null is allowed where the rule says so; the array put for a null may be too (an object's members).
      EXPECT_TRUE(rule == nullptr || (kept.is_null() && rule->type == fields::Rule::Type::array))
          << "accepted, though its rule says " << fields::rule_text(*rule);
      use_like_the_commands(set, file);
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file), std::string::npos) << message;
      EXPECT_NE(message.find("field '"), std::string::npos) << message;
      EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "an exception other than tbd::Error: " << e.what();
    }
  }
  EXPECT_GT(refused, 0u) << kind;
  std::cout << kind << ": " << all.size() << " fields mutated, " << refused << " refused\n";
}

TEST(DocumentMutation, ResultRefusesEveryFieldOfTheWrongType) { mutate_every_field("result", tiny_result()); }
TEST(DocumentMutation, SweepRefusesEveryFieldOfTheWrongType) {
  mutate_every_field("sweep", sweep_document(tiny_result()));
}
TEST(DocumentMutation, SuiteRefusesEveryFieldOfTheWrongType) {
  mutate_every_field("suite", suite_document(tiny_result()));
}
TEST(DocumentMutation, ScaleRefusesEveryFieldOfTheWrongType) {
  mutate_every_field("scale", scale_document(tiny_result()));
}
TEST(DocumentMutation, ShapesRefusesEveryFieldOfTheWrongType) { mutate_every_field("shapes", shapes_document()); }
TEST(DocumentMutation, PredictionRefusesEveryFieldOfTheWrongType) {
  mutate_every_field("prediction", prediction_document(tiny_result()));
}

}  // namespace
}  // namespace tbd
