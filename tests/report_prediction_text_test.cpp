// tbd predict's text (print_prediction) from every prediction kind and
// check kind, byte for byte as `tbd predict` printed it before the text
// moved beside the report; a document with wrong types prints, not throws.
#include <gtest/gtest.h>

#include <sstream>

#include "tbd/report/prediction_text.h"

namespace tbd {
namespace {

const char* kDocument = R"json({
 "schema": "tbd.prediction/1",
 "base": "base.json",
 "base_label": "resnet50 tiny b4 fp32",
 "predictions": [
  {
   "kind": "data_parallel",
   "ranks": 2,
   "unit": "images/s",
   "global_samples_per_s": 750.123,
   "per_rank_samples_per_s": 375.06,
   "speedup": 1.875,
   "efficiency": 0.9375,
   "iteration_ms": {
    "data": 0.5,
    "forward": 12.25,
    "backward": 20.125,
    "communication_exposed": 3.3333,
    "bucket_copies": 0.75,
    "optimizer": 4.0,
    "other": 0.25,
    "straggler": 1.5,
    "total": 42.7
   },
   "rank_phases": "forward 12 ms, backward 20 ms",
   "allreduce": "gloo ring, 3 buckets",
   "overlap": true,
   "check": {
    "command": "tbd run",
    "result": "nproc-2.json",
    "runs": [
     "a",
     "b",
     "c"
    ],
    "measured_global_samples_per_s": 720.0,
    "error": 0.04166666666666674,
    "measured_process_cv": 0.0123,
    "measured_repetition_cv": 0.02
   }
  },
  {
   "kind": "data_parallel",
   "ranks": 2,
   "unit": "images/s",
   "global_samples_per_s": 750.123,
   "per_rank_samples_per_s": 375.06,
   "speedup": 1.875,
   "efficiency": 0.9375,
   "iteration_ms": {
    "data": 0.5,
    "forward": 12.25,
    "backward": 20.125,
    "communication_exposed": 3.3333,
    "bucket_copies": 0.75,
    "optimizer": 4.0,
    "other": 0.25,
    "straggler": 1.5,
    "total": 42.7
   },
   "rank_phases": "forward 12 ms, backward 20 ms",
   "allreduce": "gloo ring, 3 buckets",
   "overlap": true,
   "sparse_allreduce_ms": 3.21,
   "communication_source": "measured in context",
   "replayed_exposed_ms": 2.5,
   "check": {
    "command": "x",
    "result": "r.json",
    "runs": [
     "a"
    ],
    "measured_global_samples_per_s": 700.5,
    "error": -0.031,
    "measured_process_cv": null,
    "measured_repetition_cv": 0.045
   }
  },
  {
   "kind": "data_parallel",
   "ranks": 2,
   "unit": "images/s",
   "global_samples_per_s": 750.123,
   "per_rank_samples_per_s": 375.06,
   "speedup": 1.875,
   "efficiency": 0.9375,
   "iteration_ms": {
    "data": 0.5,
    "forward": 12.25,
    "backward": 20.125,
    "communication_exposed": 3.3333,
    "bucket_copies": 0.75,
    "optimizer": 4.0,
    "other": 0.25,
    "straggler": 1.5,
    "total": 42.7
   },
   "rank_phases": "forward 12 ms, backward 20 ms",
   "allreduce": "gloo ring, 3 buckets",
   "overlap": true,
   "check": {
    "command": "x",
    "result": "r.json",
    "runs": [
     "a"
    ],
    "measured_global_samples_per_s": 700.5,
    "error": 0.1,
    "measured_process_cv": null,
    "measured_repetition_cv": null
   }
  },
  {
   "kind": "data_parallel",
   "ranks": 2,
   "unit": "images/s",
   "global_samples_per_s": 750.123,
   "per_rank_samples_per_s": 375.06,
   "speedup": 1.875,
   "efficiency": 0.9375,
   "iteration_ms": {
    "data": 0.5,
    "forward": 12.25,
    "backward": 20.125,
    "communication_exposed": 3.3333,
    "bucket_copies": 0.75,
    "optimizer": 4.0,
    "other": 0.25,
    "straggler": 1.5,
    "total": 42.7
   },
   "rank_phases": "forward 12 ms, backward 20 ms",
   "allreduce": "gloo ring, 3 buckets",
   "overlap": true,
   "check": {
    "not_available": "the base has no gradient timeline"
   }
  },
  {
   "kind": "class_speedup",
   "classes": [
    {
     "class": "conv",
     "factor": 2
    },
    {
     "class": "gemm",
     "factor": 1.5
    }
   ],
   "samples_per_s": 512.3456,
   "speedup": 1.33333,
   "base_iteration_ms": 31.25,
   "iteration_ms": 23.4,
   "unit": "images/s"
  },
  {
   "kind": "roofline",
   "samples_per_s": 1234.5,
   "speedup": 3.2,
   "base_iteration_ms": 31.25,
   "iteration_ms": 9.7
  },
  {
   "kind": "memory_limit",
   "limit_bytes": 1073741824,
   "base_batch_size": 4,
   "base_peak_bytes": 123456789,
   "fixed_bytes": 104857600,
   "per_sample_bytes": 5242880,
   "largest_fitting_batch": 180,
   "first_out_of_memory_doubling": 256,
   "check": {
    "command": "tbd sweep",
    "sweep": "sweep/sweep.json",
    "measured_largest_fitting_batch": 128,
    "measured_first_out_of_memory_batch": 256,
    "doubling_steps_off": 0.0
   }
  },
  {
   "kind": "memory_limit",
   "limit_bytes": 1048576,
   "fixed_bytes": 2097152,
   "per_sample_bytes": 1024.5,
   "largest_fitting_batch": null,
   "first_out_of_memory_doubling": null,
   "check": {
    "command": "tbd sweep",
    "sweep": "s.json",
    "measured_largest_fitting_batch": null,
    "measured_first_out_of_memory_batch": null,
    "doubling_steps_off": null
   }
  },
  {
   "kind": "memory_limit",
   "limit_bytes": 2147483648,
   "fixed_bytes": 2097152,
   "per_sample_bytes": 1000000.0,
   "largest_fitting_batch": 1000,
   "first_out_of_memory_doubling": 1024,
   "check": {
    "command": "tbd sweep",
    "sweep": "s.json",
    "measured_first_out_of_memory_batch": 512,
    "doubling_steps_off": 1.0
   }
  }
 ]
})json";

const char* kExpected = R"text(predictions for resnet50 tiny b4 fp32 (base.json)
  2 ranks: 750.1 images/s global (375.1 per rank), speed-up 1.88, efficiency 94%
    iteration 42.7 ms = forward 12.2 + backward 20.1 + exposed all-reduce 3.33 + bucket copies 0.75 + optimizer 4 + data/other 0.75
    each rank's step: forward 12 ms, backward 20 ms
    all-reduce: gloo ring, 3 buckets; straggler 1.5 ms
    check: measured 720 images/s (mean of 3 runs, CV 1.2%), prediction error +4.2% (nproc-2.json)
  2 ranks: 750.1 images/s global (375.1 per rank), speed-up 1.88, efficiency 94%
    iteration 42.7 ms = forward 12.2 + backward 20.1 + communication 3.33 + bucket copies 0.75 + optimizer 4 + data/other 0.75
    communication measured in context (the step's schedule on a stand-in, with and without it): 3.33 ms; the replay of the buckets timed alone exposes 2.5 ms
    each rank's step: forward 12 ms, backward 20 ms
    all-reduce: gloo ring, 3 buckets; straggler 1.5 ms
    sparse gradients (tables stacked) all-reduced when backward ends, beside the last bucket: 3.21 ms back to back
    check: measured 700.5 images/s (one run, repetition CV 4.5%), prediction error -3.1% (r.json)
  2 ranks: 750.1 images/s global (375.1 per rank), speed-up 1.88, efficiency 94%
    iteration 42.7 ms = forward 12.2 + backward 20.1 + exposed all-reduce 3.33 + bucket copies 0.75 + optimizer 4 + data/other 0.75
    each rank's step: forward 12 ms, backward 20 ms
    all-reduce: gloo ring, 3 buckets; straggler 1.5 ms
    check: measured 700.5 images/s (one run), prediction error +10.0% (r.json)
  2 ranks: 750.1 images/s global (375.1 per rank), speed-up 1.88, efficiency 94%
    iteration 42.7 ms = forward 12.2 + backward 20.1 + exposed all-reduce 3.33 + bucket copies 0.75 + optimizer 4 + data/other 0.75
    each rank's step: forward 12 ms, backward 20 ms
    all-reduce: gloo ring, 3 buckets; straggler 1.5 ms
    check: not available: the base has no gradient timeline
  conv 2x, gemm 1.5x: 512.3 images/s (speed-up 1.33; iteration 31.25 -> 23.4 ms)
  every operator at its roofline ceiling: 1234 samples/s (speed-up 3.20; iteration 31.25 -> 9.7 ms)
  memory limit 1024.0 MiB: fixed 100.0 MiB + 5 MiB per sample -> largest batch 180, first doubling that does not fit 256
    check: tbd sweep ran out of memory first at batch 256; prediction +0 doubling steps off (sweep/sweep.json)
  memory limit 1.0 MiB: fixed 2.0 MiB + 0.000977 MiB per sample -> largest batch none, first doubling that does not fit none
    check: the sweep found no out-of-memory batch (s.json)
  memory limit 2048.0 MiB: fixed 2.0 MiB + 0.954 MiB per sample -> largest batch 1000, first doubling that does not fit 1024
    check: tbd sweep ran out of memory first at batch 512; prediction +1 doubling steps off (s.json)
)text";

TEST(PredictionText, EveryKindAndCheckPrintAsPredictPrintedThem) {
  std::ostringstream out;
  print_prediction(out, nlohmann::json::parse(kDocument));
  EXPECT_EQ(out.str(), kExpected);
}

TEST(PredictionText, WrongTypesPrintAsAbsent) {
  const nlohmann::json doc = {{"base", 3},
                              {"predictions",
                               {{{"kind", "data_parallel"}, {"ranks", "two"}, {"iteration_ms", 5}, {"check", 1}},
                                {{"kind", "class_speedup"}, {"classes", {{{"class", 1}, {"factor", "x"}}}}},
                                {{"kind", "memory_limit"}, {"largest_fitting_batch", "8"}},
                                {{"kind", "teleport"}},
                                7}}};
  std::ostringstream out;
  EXPECT_NO_THROW(print_prediction(out, doc));
  EXPECT_EQ(out.str().substr(0, 25), "predictions for ? (?)\n  0");
  EXPECT_NE(out.str().find("  ? 0x: nan samples/s"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("largest batch none"), std::string::npos) << out.str();
  EXPECT_NO_THROW(print_prediction(out, nlohmann::json::array()));
}

}  // namespace
}  // namespace tbd
