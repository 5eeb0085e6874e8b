// The runner owns the clock: warm-up, measured windows, repetitions, device
// synchronisation at every iteration boundary, and the result document.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

struct RunOutcome {
  nlohmann::json result;  // the tbd.result/1 document
  bool partial = false;   // interrupted before the measured window completed
  int rank = 0;           // in a distributed run only rank 0 reports
  std::vector<std::pair<std::string, std::string>> summary;  // human summary lines
};

// A Kineto trace of `iterations` extra iterations run after the measured
// window (so profiler overhead never enters a statistic); none when path is empty.
struct TraceRequest {
  std::string path;
  int iterations = 3;
};

// Throws UsageError when `processes` > 1 and the workload refuses
// data-parallel runs (WorkloadInfo::data_parallel_refusal says why); called
// before any process is started and again by run_benchmark.
void check_data_parallel_supported(const std::string& workload, int processes);

// Runs one benchmark. `probes` names the probes beyond `time` (which always
// runs). Throws UsageError for bad options, Error when the run fails.
RunOutcome run_benchmark(const RunOptions& options, const std::vector<std::string>& probes,
                         const TraceRequest& trace = {});

}  // namespace tbd
