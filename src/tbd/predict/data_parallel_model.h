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
#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

struct DataParallelPlan {
  int ranks = 2;
  bool overlap = true;
  double bucket_mb = 25;
  // Seconds one all-reduce of `bytes` takes among the ranks.
  std::function<double(double bytes)> allreduce_seconds;
  std::string allreduce_source;  // how those seconds were obtained, for the output
  // Each rank's step without communication: a `phases` section (null: the
  // base's), and what waiting for the slowest rank adds (aligned_straggle of
  // co-located copies; 0 without them).
  nlohmann::json rank_phases;
  double straggle_s = 0;
  std::string rank_phases_source = "the base run's phases (one rank per device: no co-location)";
  double copy_bytes_per_s = 0;  // bandwidth of the bucket copies (0: not counted)
};

// Throws Error naming what the base result lacks (a gradients section, phase
// times, a single-process run).
nlohmann::json predict_data_parallel(const nlohmann::json& base, const DataParallelPlan& plan);

// The gradient bucket sizes (bytes) the plan's bucket_mb gives the base's parameters.
std::vector<double> bucket_bytes_of(const nlohmann::json& base, double bucket_mb);

// The slowest copy's iteration time minus the copies' mean, averaged over
// the iterations the copies ran side by side (iteration k of every copy at
// once: the same input shapes at the same step, as the ranks see them).
double aligned_straggle(const std::vector<std::vector<double>>& copies);

// Ring all-reduce time for a bandwidth a user gives (nccl-tests' bus
// bandwidth convention): latency + 2(N−1)/N · bytes / bus bandwidth.
double ring_allreduce_seconds(double bytes, int ranks, double bus_bytes_per_s, double latency_s);

}  // namespace tbd
