// What a single-process result predicts for N data-parallel ranks, in the
// spirit of Daydream (Zhu et al., ATC 2020): replay the measured step with
// the gradient all-reduce inserted where the backward timeline puts it
// (docs/metrics.md#prediction).
//
//   iteration(N) = data + forward + backward + exposed communication
//                  + bucket copies + optimizer + other + straggler
//
// The phases are each rank's step without communication: the base's, or,
// when the N ranks share one host, those measured with N copies of the base
// running at once (co-location). The exposed communication comes from
// replaying the buckets: each bucket's all-reduce starts when its last
// gradient is ready (overlap on) or when backward ends (off), one at a time,
// each taking the time measured (or modelled) for its size. The straggler
// term is what the co-located copies' slowest iteration adds to their mean
// one: a synchronous step waits for the slowest rank.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/predict/sharded_step.h"

namespace tbd {

struct DataParallelPlan {
  int ranks = 2;
  bool overlap = true;
  double bucket_mb = 25;
  // Seconds one all-reduce of `bytes` takes among the ranks.
  std::function<double(double bytes)> allreduce_seconds;
  // Seconds one iteration's sparse all-reduces take together (embedding
  // tables with sparse gradients, reduced on their own when backward ends,
  // beside the last bucket's all-reduce; see sparse_gradients_of); 0 when
  // there are none.
  double sparse_allreduce_seconds = 0;
  std::string allreduce_source;  // how those seconds were obtained, for the output
  // What the whole gradient communication adds to one iteration when it
  // runs among the computation on this host (bucket_allreduce.h: the step's
  // schedule replayed on a stand-in computation, with and without it). When
  // set it is the iteration's communication term; the replay of the buckets
  // timed alone is then reported beside it. Empty: the replay's exposure.
  std::optional<double> communication_in_context_s;
  // Each rank's step without communication: a `phases` section (null: the
  // base's), and what waiting for the slowest rank adds (aligned_straggle of
  // co-located copies; 0 without them).
  nlohmann::json rank_phases;
  double straggle_s = 0;
  std::string rank_phases_source = "the base run's phases (one rank per device: no co-location)";
  double copy_bytes_per_s = 0;  // bandwidth of the bucket copies (0: not counted)
  // --sharding optimizer|gradients|full: the sharded step's program
  // (sharded_step.h) replaces the buckets' all-reduces, each collective
  // taking collective_seconds; none: the replicated run above.
  Sharding sharding = Sharding::none;
  std::function<double(const StepCollective&)> collective_seconds;
  // --embedding-sharding table|row: the tables stay on their ranks (no
  // sparse all-reduce: sparse_allreduce_seconds is 0), and what placing
  // them changes in the lookups adds to the iteration: measured, the
  // placed lookups' time in context less the same bags' from whole tables
  // (the co-located copies ran those); with --bus-gbps, the lookups'
  // all-to-alls (embedding_exchange.h) over the bus. Exchange bytes: per
  // iteration, one rank's sends.
  EmbeddingSharding embedding_sharding = EmbeddingSharding::replicate;
  double embedding_placement_s = 0, embedding_exchange_bytes = 0;
  std::string embedding_placement_source;
};

// One iteration's gradient communication on the timeline of a step, as the
// replay schedules it: before_s of computation (data and forward), then each
// backward pass, its buckets (in launch order) ready at ready_s from the
// pass's start (its end with overlap off) and its sparse gradients, if any,
// going when it ends; then after_s (optimizer and the rest).
struct ScheduledBucket {
  double bytes = 0;
  double ready_s = 0;
};
struct ScheduledPass {
  double backward_s = 0;
  std::vector<ScheduledBucket> buckets;
  bool sparse = false;  // sparse gradients are all-reduced when this pass ends
};
struct StepSchedule {
  double before_s = 0;
  std::vector<ScheduledPass> passes;
  double after_s = 0;
};
// `phases`: the phase times to lay the step out on (the base's `phases`
// section, or the co-located copies').
StepSchedule step_schedule(const nlohmann::json& base, const nlohmann::json& phases, double bucket_mb, bool overlap);

// Throws Error naming what the base result lacks (a gradients section, phase
// times, a single-process run). With plan.sharding set the communication is
// the sharded step's (replayed, or measured in context) and the optimizer
// steps 1/N of the parameters.
nlohmann::json predict_data_parallel(const nlohmann::json& base, const DataParallelPlan& plan);

// The base's phase times, checked to be what predict_data_parallel replays:
// a single-process result with phase times and a gradient timeline. Throws
// Error (UsageError for a multi-rank base) naming what is missing.
nlohmann::json replayable_phases(const nlohmann::json& base);

// The gradient bucket sizes (bytes) the plan's bucket_mb gives the base's parameters.
std::vector<double> bucket_bytes_of(const nlohmann::json& base, double bucket_mb);

// The gradients the ranks would all-reduce sparse, each on its own, as the
// gradient reducer does on Gloo (a CPU base): an embedding table's rows, its
// gradient's mean entries (looked-up rows) and the bytes of one row. Empty
// for a CUDA base (NCCL: they travel densified in the buckets).
struct SparseGradient {
  int64_t rows = 0;
  double entries = 0;
  int64_t row_elements = 0;
  int64_t element_size = 4;
};
std::vector<SparseGradient> sparse_gradients_of(const nlohmann::json& base);

// One iteration's sparse all-reduces for a bus bandwidth a user gives: one
// collective per row shape (the reducer stacks the tables), each Gloo's
// three allgathers (sizes, indices, values), so 3 latencies each; every rank
// receives (N−1) ranks' indices (8 bytes an entry) and values: that / bus.
double ring_sparse_allreduce_seconds(const std::vector<SparseGradient>& sparse, int ranks, double bus_bytes_per_s,
                                     double latency_s);

// The slowest copy's iteration time minus the copies' mean, averaged over
// the iterations the copies ran side by side (iteration k of every copy at
// once: the same input shapes at the same step, as the ranks see them).
double aligned_straggle(const std::vector<std::vector<double>>& copies);

// Ring all-reduce time for a bandwidth a user gives (nccl-tests' bus
// bandwidth convention): latency + 2(N−1)/N · bytes / bus bandwidth.
double ring_allreduce_seconds(double bytes, int ranks, double bus_bytes_per_s, double latency_s);

}  // namespace tbd
