// Result files (tbd.result/1 and the scale, sweep, suite, prediction and
// shapes documents) as `tbd report`, `tbd compare` and `tbd predict` read them: the
// loader's checks (each kind's reader), then what the commands do with
// every document it accepted: the report model and its Markdown, a
// comparison, and each prediction model on each run.
#include "fuzz_support.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/memory_model.h"
#include "tbd/predict/op_speedup_model.h"
#include "tbd/report/compare.h"
#include "tbd/report/report_model.h"
#include "tbd/report/result_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("result.json", tbd::fuzz::as_text(data, size));
  tbd::ResultSet set;
  tbd::fuzz::expect_value_or_error([&] { set = tbd::load_results(path); });
  for (const auto& run : set.runs) {
    tbd::configuration_key(run.result);
    tbd::configuration_key_without_batch(run.result);
    tbd::configuration_label(run.result);
    tbd::median_iteration_s(run.result);
    tbd::throughput_of(run.result);
    tbd::throughput_unit(run.result);
    tbd::cpu_utilisation(run.result);
    tbd::flops_utilisation(run.result);
    tbd::peak_memory_bytes(run.result);
    tbd::iteration_times(run.result);
    // A model refuses a base without its section by tbd::Error.
    tbd::DataParallelPlan plan;
    plan.allreduce_seconds = [](double bytes) { return bytes / 1e9; };
    tbd::fuzz::expect_value_or_error([&] { tbd::predict_data_parallel(run.result, plan); });
    tbd::fuzz::expect_value_or_error([&] { tbd::sparse_gradients_of(run.result); });
    tbd::fuzz::expect_value_or_error([&] { tbd::predict_memory_limit(run.result, 1LL << 30); });
    tbd::fuzz::expect_value_or_error([&] { tbd::predict_class_speedups(run.result, {{"gemm", 2.0}}); });
    tbd::fuzz::expect_value_or_error([&] { tbd::predict_at_roofline(run.result); });
  }
  if (!set.runs.empty() || !set.sweeps.empty() || !set.suites.empty() || !set.predictions.empty() ||
      !set.shapes.empty()) {
    tbd::fuzz::expect_value_or_error([&] { tbd::render_markdown(tbd::build_report_model(set, path)); });
    tbd::fuzz::expect_value_or_error([&] { tbd::compare_results(set, set, {}, path, path); });
  }
  return 0;
}
