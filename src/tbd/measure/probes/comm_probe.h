// comm: the gradient communication of data-parallel runs, per measured
// iteration (docs/metrics.md#comm): the replicated run's bucket all-reduces,
// or a sharded run's all-gathers, reduce-scatters and all-reduces; and the
// collectives the model runs itself (the all-to-alls of dlrm's sharded
// embedding tables). Not available in single-process runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tbd/measure/probes/probe.h"

namespace tbd {

struct CommIteration;
class CollectiveLog;

// One synchronisation's figures, from the reducer's events.
struct CommFigures {
  double bytes = 0;  // gradient bytes all-reduced
  int buckets = 0;
  double busy_s = 0;                                 // union of the buckets' in-flight intervals
  double hidden_s = 0;                               // part of it while backward was still computing
  double exposed_wait_s = 0;                         // time the step blocked after backward's computation
  std::vector<double> bucket_seconds, bucket_bytes;  // per bucket: all-reduce time, bytes
};
CommFigures analyse_synchronisation(const CommIteration& it);

// A sharded run's collectives in one iteration (ShardedDataParallel's
// history, reduced to plain numbers so a test can make one by hand).
struct TimedCollective {
  std::string kind;                    // "all-gather", "reduce-scatter", "all-reduce"
  double bytes = 0;                    // nccl-tests' size of the collective
  double launched_s = 0, done_s = -1;  // done_s < 0: completion not seen
  double seconds = -1;                 // the collective's own time: device-timed, or done − launched; < 0: none
};
struct ShardedCommFigures {
  double busy_s = 0;  // union of the collectives' in-flight intervals
  double bytes = 0;
  int collectives = 0;
  std::map<std::string, int> count_by_kind;
  std::map<std::string, double> bytes_by_kind;
  // Per kind: Σ bytes·algbw and Σ bytes over the timed ones (the bytes-weighted mean algbw).
  std::map<std::string, double> weighted_algbw_by_kind, timed_bytes_by_kind;
};
ShardedCommFigures analyse_sharded(const std::vector<TimedCollective>& collectives);
// nccl-tests' bus-bandwidth factor of a collective among `ranks`:
// 2(n−1)/n for all-reduce, (n−1)/n for all-gather and reduce-scatter.
double bus_factor(const std::string& kind, int ranks);

class CommProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_iteration_end(const IterationRecord& r) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  GradientReducer* reducer_ = nullptr;
  ShardedDataParallel* sharded_ = nullptr;  // --sharding: the collectives are the sharded path's
  CollectiveLog* model_log_ = nullptr;      // the model's own collectives (embedding all-to-alls)
  std::string backend_ = "gloo";
  int world_ = 1;
  bool overlap_ = true;
  std::vector<double> busy_s_, hidden_s_, exposed_s_, busbw_, bytes_;
  std::vector<int> buckets_;
  // Per measured iteration: synchronisations (ends of a reducing backward)
  // and collectives launched (bucket all-reduces and sparse exchanges).
  std::vector<double> synchronisations_, collectives_;
  // Sharded runs, per measured iteration: busy and blocked (exposed) time,
  // bytes and collectives; per kind over the run: counts, bytes, Σ bytes·algbw.
  std::map<std::string, double> kind_count_, kind_bytes_, kind_weighted_, kind_timed_bytes_;
  std::string strategy_;
  // The model's all-to-alls, per measured iteration: count, bytes, seconds
  // (all exposed: the step waits on each); over the run: Σ bytes·algbw, Σ bytes timed.
  std::vector<double> a2a_count_, a2a_bytes_, a2a_s_;
  double a2a_weighted_ = 0, a2a_timed_bytes_ = 0;
  void model_collectives_end(bool measured);
  void contribute_all_to_all(nlohmann::json& comm) const;
  std::optional<double> all_to_all_bus_bandwidth() const;
  std::vector<std::pair<std::string, std::string>> gradient_summary_lines() const;
  void sharded_iteration_end();
  bool completion_unreported(const std::string& kind) const;
  void contribute_sharded(nlohmann::json& result) const;
};

}  // namespace tbd
