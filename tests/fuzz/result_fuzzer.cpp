// Result files (tbd.result/1 and the scale, sweep and suite documents) as
// `tbd report` and `tbd compare` read them: the loader's validation, then
// the accessors both commands use on every run it accepted.
#include "fuzz_support.h"
#include "tbd/report/result_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("result.json", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    const auto set = tbd::load_results(path);
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
    }
  });
  return 0;
}
