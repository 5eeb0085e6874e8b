// layers: each convolution and linear layer of the model by its module path
// ("layer3.0.conv2"), the geometry of its calls (input shape, weight, the
// convolution's arguments, dtype, memory format) and its in-model time over
// the instrumented iterations: the host wall time of its forward operator
// plus that of the autograd nodes its forward made, run in backward
// (matched by sequence number, as PyTorch's profiler links them). What
// `tbd shapes` sweeps and weighs (docs/analysis.md#tbd-shapes,
// docs/metrics.md#layers).
//
// A layer is found by its weight: a convolution or matrix-multiply operator
// (aten::conv2d, aten::linear, aten::addmm, ...) opened in the forward phase
// whose weight argument is one of Workload::named_weights() (the same
// storage, a transposed view included). The operators it calls are part of
// it; the innermost convolution or linear operator gives the dtype it
// computed in (bf16 under autocast) and the convolution's arguments.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tbd/measure/ops/layer_geometry.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

struct LayerRecord {
  std::string module;  // "layer3.0.conv2"
  LayerGeometry geometry;
  int64_t calls = 0;      // over the instrumented iterations
  double forward_s = 0;   // summed host wall time of its forward operators
  double backward_s = 0;  // summed host wall time of its autograd nodes
};

class LayersProbe : public Probe {
 public:
  LayersProbe() = default;
  ~LayersProbe() override;

  void on_run_start(const RunContext& ctx) override;
  void on_window_begin(int repetition) override;
  void on_window_end(int repetition) override;
  void on_iteration_begin(bool measured) override;
  void on_iteration_end(const IterationRecord& r) override;
  void on_phase_begin(Phase p) override;
  void on_phase_end(Phase p) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

  // The layers seen so far, in first-call order (safe while callbacks run).
  std::vector<LayerRecord> records() const;
  // The result's "layers" section: per layer and iteration.
  nlohmann::json document() const;
  // The weights to look for, and the callback installed (on_window_begin
  // calls it with the workload's; tests without a runner call it, then
  // on_iteration_begin(true) and on_phase_begin(forward)).
  void watch(const std::map<std::string, at::Tensor>& named_weights);

  // Called by the RecordFunction callbacks (layers_probe.cpp).
  struct Weight {
    std::string module;  // the parameter's module path
    std::string kind;    // from the parameter's rank: conv1d/2d/3d or linear
    std::vector<int64_t> sizes;
    int64_t numel = 0;  // elements: an operator's weight argument must have as many
    bool bias = false;  // the module has a bias parameter
  };
  const Weight* weight_at(const void* data, int64_t numel) const;
  void add_forward(const std::string& module, const LayerGeometry& g, double seconds,
                   const std::vector<std::pair<uint64_t, int64_t>>& nodes);
  // The layer whose forward made autograd node (forward thread, sequence number), or -1.
  int layer_of_node(uint64_t thread, int64_t sequence_nr) const;
  void add_backward(int layer, double seconds);
  bool counting() const { return counting_.load(std::memory_order_relaxed); }
  bool in_forward() const { return forward_.load(std::memory_order_relaxed); }

 private:
  void start();
  void stop();

  std::unordered_map<const void*, Weight> weights_;  // by data pointer; read-only while the callback runs
  Workload* workload_ = nullptr;
  c10::Device device_{c10::kCPU};
  mutable std::mutex mutex_;  // guards what follows
  std::vector<LayerRecord> records_;
  std::map<std::string, int> record_of_;  // module + geometry key -> records_ index
  std::map<std::pair<uint64_t, int64_t>, int> nodes_;
  int64_t iterations_ = 0;
  double iteration_s_ = 0;  // summed wall time of the instrumented iterations
  std::atomic<bool> counting_{false}, forward_{false};
  uint64_t handle_ = 0;
};

}  // namespace tbd
