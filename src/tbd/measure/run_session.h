// Everything one run holds while the runner's steps pass it along (runner.cpp)
// and the result is assembled from it (run_result.cpp). Internal to measure/.
#pragma once

#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/grad_scaler.h"
#include "tbd/core/host_allocator.h"
#include "tbd/core/options.h"
#include "tbd/core/phases.h"
#include "tbd/core/settings.h"
#include "tbd/core/workload.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/sharded_data_parallel.h"
#include "tbd/measure/cuda_graph_step.h"
#include "tbd/measure/machine/device.h"
#include "tbd/measure/machine/timing_conditions.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/measure/runner.h"

namespace tbd {

struct WarmupRecord {
  int64_t iterations = 0;
  // count | settled | cap | interrupted | shapes (went on to meet every
  // shape) | cuda graph (went on until the step was captured)
  std::string ended_by = "count";
  double seconds = 0;
  int64_t shapes_declared = 0;  // Workload::distinct_batch_shapes() (0: not known)
  bool shapes_cap = false;      // warm-up stopped at its cap with a declared shape not yet run
};

// The batch shapes (batch_shape()) the run's iterations met, and how often.
struct ShapeRecord {
  std::map<std::string, int64_t> warmup, timed;
  // Timed iterations with a micro-batch whose shape warm-up never ran: on a
  // GPU their time holds one-off planning (cuDNN, cuBLAS) for that shape.
  int64_t timed_first_seen = 0;
};

// When each step began and ended on the system clock (ms since the Unix
// epoch): the result's wall_clock, which --mllog turns into MLPerf's events.
struct WallClock {
  int64_t start = 0, setup_end = 0, warmup_end = 0, end = 0;
  std::vector<std::pair<int64_t, int64_t>> windows;  // each timed repetition's start and end
};

struct Session {
  RunOptions options;    // resolved: batch size, threads, rank and world size filled in
  DistEnvironment dist;  // the launcher's variables (RANK, WORLD_SIZE, ...), read once
  c10::Device device{c10::kCPU};
  Workload* workload = nullptr;
  Settings settings;
  std::vector<std::unique_ptr<Probe>> probes;
  std::vector<Probe*> timed_probes, analysis_probes;
  std::unique_ptr<RunContext> context;
  // The timed windows' Phases has no listeners (no probe callback in a timed
  // step); the instrumented iterations' one notifies the analysis probes.
  std::unique_ptr<Phases> phases, instrumented_phases;
  std::unique_ptr<ProcessGroup> group;           // distributed runs only
  std::unique_ptr<GradientReducer> reducer;      // distributed runs without --sharding
  std::unique_ptr<ShardedDataParallel> sharded;  // distributed runs with --sharding
  std::unique_ptr<GradScaler> scaler;            // fp16 runs only
  std::optional<DeviceTimer> device_timer;       // its CUDA events are reused every iteration

  // Framework switches the run set (docs/workloads.md#kernel-choices).
  bool cudnn_benchmark = false;
  CudaGraphDecision cuda_graphs;              // --cuda-graphs, decided before the workload is built
  std::unique_ptr<CudaGraphStep> graph_step;  // when used: the timed and profiled steps' graph
  HostAllocatorState host_allocator;

  // What the steps found out.
  nlohmann::json environment;
  std::string created_utc;
  WarmupRecord warmup;
  ShapeRecord shapes;
  WallClock wall_clock;
  bool partial = false;  // interrupted before the timed windows completed
  TimedFigures timed;
  double first_loss = NAN, last_loss = NAN;
  int64_t instrumented_iterations = 0;
  std::optional<ConditionSnapshot> conditions_start, conditions_end;
  nlohmann::json trace;             // the --trace file's description, or null
  nlohmann::json execution_trace;   // the --execution-trace file's description, or null
  nlohmann::json workload_metrics;  // Workload::measurement(), or null
  nlohmann::json distributed;       // rank 0 of a distributed run: every rank's throughput

  // A decision every rank must share (stop warming up, stop measuring): the
  // largest value any rank proposes. One tiny all-reduce per call when distributed.
  int agreed(int local) { return group ? group->max_across_ranks(local) : local; }
};

// Assembles the tbd.result/1 document and the summary lines (run_result.cpp).
RunOutcome assemble_result(Session& s, const TraceRequest& trace);

}  // namespace tbd
