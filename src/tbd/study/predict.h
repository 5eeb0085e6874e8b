// `tbd predict`: what-if predictions from one single-process result, and
// (with `check`) their error against a real run of the predicted
// configuration (docs/metrics.md#prediction). The models are pure functions
// of the base (src/tbd/predict/); this study measures what they cannot know
// from it on this machine — the all-reduce among N local ranks (workers of
// this program, started as `tbd run --nproc` starts ranks) and each rank's
// step when N copies share the host (child `tbd run`s) — and runs the checks.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/study/study_outcome.h"

namespace tbd {

struct PredictRequest {
  std::string base;                        // a single-process result file (tbd run --out)
  int nproc = 0;                           // data-parallel ranks to predict; 0: none
  double bucket_mb = 25;                   // gradient bucket size of the predicted run
  bool overlap = true;                     // all-reduce during backward (--dist-overlap on)
  double bus_gbps = 0, latency_us = 0;     // > 0: a ring model instead of measuring here
  std::map<std::string, double> speedups;  // operator class -> factor (--faster)
  bool roofline = false;                   // every operator at its roofline ceiling
  long long memory_limit_bytes = 0;        // > 0: the batch size at which peak memory exceeds this
  std::string sharding;                    // --sharding: the memory per rank of nproc sharded ranks; empty: not asked
  long long device_memory_bytes = 0;       // > 0: whether that fits a device this large, and from how many ranks
  // dlrm's tables placed across the nproc ranks (table, row): no sparse
  // all-reduce, the lookups' all-to-alls instead (embedding_exchange.h).
  EmbeddingSharding embedding_sharding = EmbeddingSharding::replicate;
  bool check = false;   // run the predicted configuration and report the error
  int runs = 1;         // rounds of each measurement (processes are the unit of noise)
  std::string dir;      // folder for measured runs; empty: predict-WORKLOAD
  std::string out;      // write the prediction document here; empty: none
  std::string program;  // this tbd, which the copies and checks execute
  // This command line: the all-reduce workers re-execute it with
  // --calibrate-into FILE (each worker then runs run_predict_worker).
  std::vector<std::string> command;
};

// "conv=2" items of --faster -> {"conv": 2}; throws UsageError for anything
// but CLASS=FACTOR with a positive, finite factor.
std::map<std::string, double> parse_speedups(const std::vector<std::string>& items);

// Checks the request, measures what it must, predicts, checks and writes
// `out`; prints the predictions on `human`. The document is tbd.prediction/1.
StudyOutcome run_predict(const PredictRequest& request, std::ostream& human);

// In each all-reduce worker (a rank of a local launch): times every bucket
// size's all-reduce and the sparse one, and rank 0 writes them to `into`.
int run_predict_worker(const PredictRequest& request, const std::string& into);

}  // namespace tbd
