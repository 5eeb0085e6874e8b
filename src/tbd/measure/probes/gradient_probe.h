// gradients: when, within backward, each trainable parameter's gradient is
// ready (instrumented iterations only: a hook per parameter). This is the
// backward timeline a data-parallel prediction needs (predict/): with
// overlap, a bucket's all-reduce can start once its last gradient is ready
// (docs/metrics.md#gradient-timeline).
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include <torch/types.h>

#include "tbd/measure/probes/probe.h"

namespace tbd {

class GradientProbe : public Probe {
 public:
  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_iteration_begin(bool measured) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;

  // The parameters to watch (on_run_start takes the workload's trainable ones).
  void watch(const std::vector<torch::Tensor>& parameters);

 private:
  using Clock = std::chrono::steady_clock;
  // One backward phase: its length and each parameter's ready time (s after
  // the phase began; negative when the parameter got no gradient in it).
  struct Pass {
    double seconds = 0;
    std::vector<double> ready_s;
  };
  void on_gradient(size_t k, const torch::Tensor& grad);

  std::vector<torch::Tensor> params_;  // trainable ones, in the workload's order
  std::vector<unsigned> hooks_;
  std::string refusal_;  // why this workload has no data-parallel timeline
  std::mutex mutex_;     // hooks may run on autograd's threads
  bool counting_ = false, in_backward_ = false;
  Clock::time_point pass_begin_;
  std::vector<Pass> current_;                  // this iteration's passes
  std::vector<std::vector<Pass>> iterations_;  // finished instrumented iterations
  // Sparse gradients (embedding tables): entries seen, and how many times.
  std::vector<double> sparse_entries_;
  std::vector<int> sparse_seen_;
};

}  // namespace tbd
