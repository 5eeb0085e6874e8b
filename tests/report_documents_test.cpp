// The typed readers of tbd's documents: a missing field, a parent that is
// not an object and a field of another type all read as absent (NaN, -1,
// none, empty), never as a JSON-library exception, and well-typed fields
// read as written.
#include <gtest/gtest.h>

#include <cmath>

#include "tbd/report/json_fields.h"
#include "tbd/report/prediction_document.h"
#include "tbd/report/result_document.h"
#include "tbd/report/study_documents.h"

namespace tbd {
namespace {

TEST(JsonFields, MissingParentsAndWrongTypesAreAbsent) {
  const nlohmann::json j = {{"a", {{"n", 2.5}, {"i", 7}, {"s", "text"}, {"b", true}, {"z", nullptr}}}, {"list", 3}};
  EXPECT_EQ(fields::number(j, {"a", "n"}), 2.5);
  EXPECT_EQ(fields::integer(j, {"a", "i"}), 7);
  EXPECT_EQ(fields::integer(j, {"a", "n"}), 2);  // any number, as nlohmann's value() converts it
  EXPECT_EQ(fields::string(j, {"a", "s"}), "text");
  EXPECT_EQ(fields::boolean(j, {"a", "b"}), true);
  EXPECT_EQ(fields::text(j, {"a", "i"}), "7");
  EXPECT_EQ(fields::text(j, {"a", "s"}), "text");
  EXPECT_FALSE(fields::text(j, {"a", "z"}));  // null reads as absent
  EXPECT_FALSE(fields::number(j, {"a", "s"}));
  EXPECT_FALSE(fields::string(j, {"a", "n"}));
  EXPECT_FALSE(fields::boolean(j, {"a", "i"}));
  EXPECT_FALSE(fields::number(j, {"a", "missing"}));
  EXPECT_FALSE(fields::number(j, {"a", "n", "deeper"}));  // a number is not an object
  EXPECT_FALSE(fields::number(nlohmann::json::array({1, 2}), {"a"}));
  EXPECT_TRUE(std::isnan(fields::number_or_nan(j, {"a", "s"})));
  EXPECT_TRUE(std::isnan(fields::number_or_nan(j, {"nothing"})));
  EXPECT_TRUE(fields::array(j, {"list"}).empty());
  EXPECT_TRUE(fields::object(j, {"a", "s"}).empty());
  EXPECT_EQ(fields::object(j, {"a"}).size(), 5u);
}

nlohmann::json full_result() {
  return nlohmann::json::parse(R"json({
    "schema": "tbd.result/1",
    "workload": {"name": "resnet50", "options": {"batch_size": 4, "device": "cuda:0"}},
    "environment": {"cpu": {"model": "Test CPU", "cores_available_to_process": 2}, "os": {"hostname": "h"}},
    "iterations": [0.1, 0.2],
    "summary": {"median_s": 0.15, "cv": 0.1},
    "throughput": {"samples_per_s": 20, "unit": "images/s", "ci95": [18, 22]},
    "distributed": {"global_samples_per_s": 40},
    "cpu": {"utilisation": 0.5},
    "flops": {"utilization": {"measured": 0.25}, "achieved_flops_per_s": 1e12},
    "gpu": {"utilization_gpu": {"mean": 0.8}, "kernel_busy_share": 0.9},
    "device_time": {"median_s": 0.01},
    "memory": {"peak_bytes": 1000, "breakdown": {"weights": 600, "inputs": 400},
               "cuda_allocator": {"reserved_peak_bytes": 2000, "fragmentation": 0.5},
               "timeline": {"t_s": [0, 0.001], "bytes": {"weights": [600, 600], "inputs": [0, 400]}}},
    "ops": {"iterations": 2, "by_class": {"conv": {"share_of_self": 0.75}, "gemm": {"share_of_self": 0.25}},
            "by_layer": [{"layer": "layer1", "forward_self_s": 0.002, "backward_self_s": 0.004, "share_of_self": 1}]},
    "phases": {"iteration_ms": 10, "forward_ms": 4, "backward_ms": 6},
    "roofline": {"ceilings": {"compute": {"flops_per_s": 1e11}, "memory_bandwidth": {"bytes_per_s": 1e10}},
                 "by_op": [{"op": "aten::mm", "bound": "compute", "seconds": 0.006, "headroom_s": 0.004,
                            "intensity": 50, "achieved_flops_per_s": 3e10}],
                 "by_layer": [{"layer": "layer1", "headroom_s": 0.003, "seconds_by_bound": {"compute": 0.005}}]},
    "partial": true
  })json");
}

TEST(ResultDocument, ReadsEveryFigureTheReportShows) {
  const ResultDocument d = read_result_document(full_result());
  EXPECT_EQ(d.workload, "resnet50");
  EXPECT_EQ(d.unit, "images/s");
  EXPECT_EQ(d.batch, 4);
  EXPECT_TRUE(d.on_gpu);
  EXPECT_EQ(d.throughput, 40);  // the global figure
  EXPECT_EQ(d.ci_low, 36);      // rank 0's interval scaled to it
  EXPECT_EQ(d.ci_high, 44);
  EXPECT_EQ(d.median_s, 0.15);
  EXPECT_EQ(d.cv, 0.1);
  EXPECT_EQ(d.cpu, 0.5);
  EXPECT_EQ(d.flops, 0.25);
  EXPECT_EQ(d.peak_bytes, 1000);
  EXPECT_TRUE(d.partial);
  EXPECT_EQ(d.times, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(d.achieved_flops, 1e12);
  EXPECT_EQ(d.gpu_util, 0.8);
  EXPECT_EQ(d.kernel_busy, 0.9);
  EXPECT_EQ(d.device_median_s, 0.01);
  EXPECT_EQ(d.reserved_bytes, 2000);
  EXPECT_EQ(d.fragmentation, 0.5);
  ASSERT_EQ(d.memory.size(), memory_categories().size());
  EXPECT_EQ(d.memory[0], (std::pair<std::string, long long>{"weights", 600}));
  EXPECT_EQ(d.memory[1].second, 0);  // a category not recorded
  ASSERT_EQ(d.op_classes.size(), 2u);
  EXPECT_EQ(d.op_classes[0], (std::pair<std::string, double>{"conv", 0.75}));
  ASSERT_EQ(d.phases_ms.size(), report_phases().size());
  EXPECT_EQ(d.phases_ms[1], (std::pair<std::string, double>{"forward", 4}));
  EXPECT_TRUE(std::isnan(d.phases_ms[0].second));  // data not recorded
  EXPECT_TRUE(d.roofline.judged);
  EXPECT_EQ(d.roofline.top_op, "aten::mm");
  EXPECT_EQ(d.roofline.compute_s, 0.006);
  ASSERT_EQ(d.roofline.points.size(), 1u);
  ASSERT_EQ(d.layers.size(), 1u);
  EXPECT_EQ(d.layers[0].forward_ms, 1);  // per instrumented iteration
  EXPECT_EQ(d.layers[0].bound, "compute");
  EXPECT_EQ(d.layers[0].headroom_ms, 3);
  EXPECT_EQ(d.memory_timeline.t_s.size(), 2u);
  EXPECT_EQ(d.memory_timeline.bytes[3], (std::vector<double>{0, 400}));  // inputs
  EXPECT_EQ(d.machine.cpu_model, "Test CPU");
  EXPECT_EQ(d.machine.cores_available, "2");
  EXPECT_FALSE(d.machine.libtorch);
}

TEST(ResultDocument, MissingFieldsReadAsProbesThatDidNotRun) {
  const ResultDocument d = read_result_document({{"schema", "tbd.result/1"}});
  EXPECT_EQ(d.workload, "?");
  EXPECT_EQ(d.unit, "samples/s");
  EXPECT_EQ(d.device, "cpu");
  EXPECT_FALSE(d.on_gpu);
  for (double v : {d.throughput, d.median_s, d.cv, d.cpu, d.flops, d.ci_low, d.achieved_flops, d.gpu_util,
                   d.kernel_busy, d.device_median_s, d.fragmentation})
    EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(d.peak_bytes, -1);
  EXPECT_EQ(d.reserved_bytes, -1);
  EXPECT_TRUE(d.memory.empty() && d.op_classes.empty() && d.phases_ms.empty() && d.layers.empty());
  EXPECT_FALSE(d.roofline.judged);
  EXPECT_TRUE(d.memory_timeline.t_s.empty());
  EXPECT_FALSE(d.machine.recorded);
}

TEST(ResultDocument, WrongTypesReadAsAbsentWithoutThrowing) {
  nlohmann::json r = full_result();
  r["summary"]["cv"] = "low";
  r["throughput"]["ci95"] = {"a", 2};
  r["distributed"] = "many";
  r["cpu"] = 1;
  r["gpu"]["utilization_gpu"] = {1, 2};
  r["memory"]["cuda_allocator"] = "none";
  r["memory"]["timeline"]["t_s"] = {0, "x"};
  r["memory"]["timeline"]["bytes"]["weights"] = "many";
  r["ops"]["by_class"] = {{"conv", 5}};
  r["ops"]["by_layer"] = {"layer1", {{"layer", 3}}};
  r["phases"] = {{"iteration_ms", 10}, {"forward_ms", "4"}};
  r["roofline"]["by_op"] = {{{"op", 1}, {"bound", 2}}, 5};
  r["roofline"]["by_layer"] = "none";
  r["environment"]["cpu"] = "fast";
  r["partial"] = "yes";
  ResultDocument d;
  ASSERT_NO_THROW(d = read_result_document(r));
  EXPECT_EQ(d.throughput, 20);  // rank 0's figure: the global one is unreadable
  EXPECT_TRUE(std::isnan(d.cv));
  EXPECT_TRUE(std::isnan(d.ci_low));
  EXPECT_TRUE(std::isnan(d.cpu));
  EXPECT_TRUE(std::isnan(d.gpu_util));
  EXPECT_EQ(d.reserved_bytes, -1);
  EXPECT_TRUE(std::isnan(d.memory_timeline.t_s[1]));
  EXPECT_EQ(d.memory_timeline.bytes[0], (std::vector<double>{0, 0}));
  ASSERT_EQ(d.op_classes.size(), 1u);
  EXPECT_TRUE(std::isnan(d.op_classes[0].second));
  ASSERT_EQ(d.layers.size(), 2u);
  EXPECT_EQ(d.layers[1].layer, "?");
  EXPECT_TRUE(std::isnan(d.phases_ms[1].second));
  EXPECT_TRUE(d.roofline.judged);
  EXPECT_TRUE(d.roofline.points.empty());
  EXPECT_FALSE(d.machine.cpu_model);
  EXPECT_FALSE(d.partial);
}

TEST(StudyDocuments, SweepSuiteAndScaleReadWhatIsThere) {
  const SweepDocument sweep = read_sweep_document(nlohmann::json::parse(R"json({
    "workload": "resnet50", "largest_fitting_batch": 4, "stopped_by": "out of memory",
    "points": [{"batch_size": 4, "status": "ok"}, {"batch_size": 8, "status": "out_of_memory", "error": "too big"}]
  })json"));
  EXPECT_EQ(sweep.workload, "resnet50");
  EXPECT_EQ(sweep.largest_fitting, 4);
  EXPECT_EQ(sweep.stopped_by, "out of memory");
  ASSERT_EQ(sweep.points.size(), 2u);
  EXPECT_EQ(sweep.points[1].batch, 8);
  EXPECT_EQ(sweep.points[1].status, "out_of_memory");
  EXPECT_EQ(sweep.points[1].error, "too big");

  const SuiteDocument suite =
      read_suite_document({{"runs", {{{"workload", "gpt"}, {"status", "failed"}, {"error", "oom"}}}}});
  ASSERT_EQ(suite.runs.size(), 1u);
  EXPECT_EQ(suite.runs[0].workload, "gpt");
  EXPECT_EQ(suite.runs[0].error, "oom");

  const ScaleDocument scale = read_scale_document(nlohmann::json::parse(R"json({
    "workload": "resnet50", "unit": "images/s",
    "points": [{"nproc": 2, "samples_per_s": 90, "speedup": 1.8, "efficiency": 0.9,
                "result": {"workload": {"options": {"scale": "tiny", "batch_size": 4}}}}]
  })json"));
  ASSERT_TRUE(scale.configuration);
  EXPECT_EQ(*scale.configuration, (std::pair<std::string, long long>{"tiny", 4}));
  ASSERT_EQ(scale.points.size(), 1u);
  EXPECT_EQ(scale.points[0].nproc, 2);
  EXPECT_EQ(scale.points[0].efficiency, 0.9);
}

TEST(StudyDocuments, MissingAndWrongTypesReadAsAbsent) {
  const nlohmann::json wrong = {{"workload", 5},
                                {"largest_fitting_batch", nullptr},
                                {"stopped_by", 1},
                                {"unit", false},
                                {"points", {{{"batch_size", "8"}, {"status", 3}}, 7}},
                                {"runs", {"x", 1}}};
  SweepDocument sweep;
  ASSERT_NO_THROW(sweep = read_sweep_document(wrong));
  EXPECT_EQ(sweep.workload, "?");
  EXPECT_FALSE(sweep.largest_fitting);
  EXPECT_EQ(sweep.stopped_by, "");
  ASSERT_EQ(sweep.points.size(), 2u);
  EXPECT_EQ(sweep.points[0].batch, 0);
  EXPECT_EQ(sweep.points[0].status, "?");
  SuiteDocument suite;
  ASSERT_NO_THROW(suite = read_suite_document(wrong));
  ASSERT_EQ(suite.runs.size(), 2u);
  EXPECT_EQ(suite.runs[0].workload, "?");
  ScaleDocument scale;
  ASSERT_NO_THROW(scale = read_scale_document(wrong));
  EXPECT_EQ(scale.unit, "samples/s");
  ASSERT_TRUE(scale.configuration);
  EXPECT_EQ(scale.configuration->first, "?");
  EXPECT_TRUE(std::isnan(scale.points[0].speedup));
  EXPECT_TRUE(read_sweep_document(nlohmann::json::array()).points.empty());
  EXPECT_FALSE(read_scale_document("text").configuration);
}

TEST(PredictionDocument, KindsAndChecksAreToldApartOnce) {
  const PredictionDocument d = read_prediction_document(nlohmann::json::parse(R"json({
    "base": "base.json", "base_label": "resnet50 tiny b4 fp32",
    "predictions": [
      {"kind": "data_parallel", "ranks": 2, "global_samples_per_s": 750, "speedup": 1.9, "unit": "images/s",
       "iteration_ms": {"total": 10, "forward": 4},
       "check": {"result": "r.json", "runs": ["a", "b"], "measured_global_samples_per_s": 720, "error": 0.04,
                 "measured_process_cv": 0.01, "measured_repetition_cv": null}},
      {"kind": "memory_limit", "limit_bytes": 1024, "first_out_of_memory_doubling": 64, "largest_fitting_batch": null,
       "check": {"sweep": "s.json", "measured_first_out_of_memory_batch": 64, "doubling_steps_off": 0}},
      {"kind": "roofline", "samples_per_s": 100, "iteration_ms": 3, "check": {"not_available": "no ceilings"}},
      {"kind": "teleport"}
    ]})json"));
  EXPECT_EQ(d.base, "base.json");
  EXPECT_EQ(d.base_label, "resnet50 tiny b4 fp32");
  ASSERT_EQ(d.predictions.size(), 4u);
  const auto& dp = d.predictions[0];
  EXPECT_EQ(dp.kind, PredictionKind::kDataParallel);
  EXPECT_EQ(dp.ranks, 2);
  EXPECT_EQ(dp.unit, "images/s");
  EXPECT_EQ(dp.step_ms.total, 10);
  EXPECT_TRUE(std::isnan(dp.step_ms.straggler));
  EXPECT_TRUE(std::isnan(dp.iteration_ms));  // an object for this kind, not the number of the others
  ASSERT_TRUE(dp.check);
  EXPECT_EQ(dp.check->kind, PredictionCheck::Kind::kMeasuredRun);
  EXPECT_EQ(dp.check->runs, 2u);
  EXPECT_EQ(dp.check->process_cv, 0.01);
  EXPECT_FALSE(dp.check->repetition_cv);
  const auto& memory = d.predictions[1];
  EXPECT_EQ(memory.kind, PredictionKind::kMemoryLimit);
  EXPECT_EQ(memory.first_out_of_memory_doubling, 64);
  EXPECT_FALSE(memory.largest_fitting_batch);
  EXPECT_EQ(memory.check->kind, PredictionCheck::Kind::kMemorySweep);
  EXPECT_EQ(memory.check->doubling_steps_off, 0);
  EXPECT_EQ(d.predictions[2].kind, PredictionKind::kRoofline);
  EXPECT_EQ(d.predictions[2].unit, "samples/s");
  EXPECT_EQ(d.predictions[2].iteration_ms, 3);
  EXPECT_EQ(d.predictions[2].check->not_available, "no ceilings");
  EXPECT_EQ(d.predictions[3].kind, PredictionKind::kUnknown);
  EXPECT_FALSE(d.predictions[3].check);
}

TEST(PredictionDocument, WrongTypesReadAsAbsent) {
  PredictionDocument d;
  ASSERT_NO_THROW(
      d = read_prediction_document(
          {{"base_label", 1}, {"predictions", {5, {{"kind", 2}}, {{"kind", "data_parallel"}, {"ranks", "2"}}}}}));
  EXPECT_EQ(d.base_label, "?");
  ASSERT_EQ(d.predictions.size(), 3u);
  EXPECT_EQ(d.predictions[0].kind, PredictionKind::kUnknown);
  EXPECT_EQ(d.predictions[1].kind, PredictionKind::kUnknown);
  EXPECT_EQ(d.predictions[2].ranks, 0);
  EXPECT_TRUE(read_prediction_document("not a document").predictions.empty());
}

}  // namespace
}  // namespace tbd
