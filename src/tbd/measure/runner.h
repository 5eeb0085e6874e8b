// The runner owns the clock: warm-up, timed windows, repetitions, device
// synchronisation at every iteration boundary, then the instrumented and
// profiled iterations the analysis needs, and the result document.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

class Workload;
struct WorkloadInfo;

struct RunOutcome {
  nlohmann::json result;                                     // the tbd.result/1 document
  bool partial = false;                                      // interrupted before the measured window completed
  int rank = 0;                                              // in a distributed run only rank 0 reports
  std::vector<std::pair<std::string, std::string>> summary;  // human summary lines
};

// A Kineto trace of `iterations` extra iterations run after the measured
// window (so profiler overhead never enters a statistic); none when path is empty.
struct TraceRequest {
  std::string path;             // --trace: the Kineto trace (a folder in data-parallel runs)
  std::string execution_trace;  // --execution-trace: PyTorch's execution trace, same iterations and layout
  int iterations = 3;
};

// Throws UsageError when `processes` > 1 and the workload refuses
// data-parallel runs (WorkloadInfo::data_parallel_refusal says why); called
// before any process is started and again by run_benchmark.
void check_data_parallel_supported(const WorkloadInfo& workload, int processes);
// Throws UsageError when --sharding cannot run: no ranks (`ranks_available`:
// a launcher's variables, or --nproc given), a workload that cannot shard,
// a strategy this build lacks, fp16 loss scaling.
void check_sharding_supported(const WorkloadInfo& info, const RunOptions& options, bool ranks_available);
// The same for --embedding-sharding table|row: ranks, and a workload with tables.
void check_embedding_sharding_supported(const WorkloadInfo& info, const RunOptions& options, bool ranks_available);
// Throws UsageError when `processes` > 1 and the workload refuses data parallelism.
void refuse_data_parallel(const WorkloadInfo& info, int processes);

// Throws UsageError when `grad_accum` > 1 and the workload has no single
// optimizer step to accumulate towards (WorkloadInfo::grad_accum_refusal
// says why); called before any process is started and again by run_benchmark.
void check_grad_accum_supported(const WorkloadInfo& workload, int64_t grad_accum);

// Whether a run turns on cuDNN's autotuner (torch.backends.cudnn.benchmark),
// which times the candidate convolution and RNN algorithms on the first call
// of each shape and keeps the fastest, inside the warm-up: on CUDA for
// workloads whose shapes repeat; not where every batch brings new sentence
// or utterance lengths (WorkloadInfo::variable_shapes), each of which would
// be tuned again inside the timed windows. Recorded as
// framework.cudnn_benchmark.
bool cudnn_autotuning_for(const c10::Device& device, const WorkloadInfo& info);

// Runs one benchmark of `workload`, as a pipeline of steps: open the
// session, warm up, timed windows (the step and the timed probes only),
// instrumented iterations (the analysis probes), profiled iterations
// (--trace, the CUDA kernel view), assemble the result. `probes` names the
// probes beyond `time` (which always runs). The caller makes the workload
// (the CLI from the registry, workloads/registry.h; tests a small fake), so
// the runner names none; options.workload is not read.
// Throws UsageError for bad options, Error when the run fails.
RunOutcome run_benchmark(const RunOptions& options, Workload& workload, const std::vector<std::string>& probes,
                         const TraceRequest& trace = {});

}  // namespace tbd
