// Whole-iteration CUDA graphs (--cuda-graphs; docs/gpu.md#cuda-graphs): the
// training step (forward, backward, clipping, the fused optimizer step) is
// captured once into a CUDA graph and replayed every iteration after, so a
// launch-bound step (ncf, small batches) costs one graph launch instead of
// hundreds of kernel launches from the host. What NVIDIA's DLRM and NCF
// training references do, and torch.compile's "reduce-overhead" mode for
// Python users.
//
// The step runs on a side stream (a graph is captured on a stream other than
// the default one): a few eager iterations first, so lazily made state
// (optimizer moments, cuBLAS handles, cuDNN plans) exists before capture;
// then one capture into static input buffers, which every later batch is
// copied into before a replay. A batch of another shape than the captured
// one runs eagerly (and is counted).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/core/workload.h"

namespace tbd {

// Why this run's step cannot be one replayed CUDA graph, in words a user can
// act on; empty: it can. `data_parallel`: the run has a process group
// (--nproc, a launcher, --sharding or --embedding-sharding).
std::string cuda_graph_refusal(const WorkloadInfo& info, const RunOptions& options, const c10::Device& device,
                               bool data_parallel);

// The graphs mode a run uses: on where it was asked for (on or auto) and
// nothing refuses it. `on` refused throws UsageError naming the reason; auto
// refused is off, with the reason kept for the result.
struct CudaGraphDecision {
  bool use = false;
  std::string reason;  // why not, when not used and asked for (auto); empty otherwise
};
CudaGraphDecision decide_cuda_graphs(const WorkloadInfo& info, const RunOptions& options, const c10::Device& device,
                                     bool data_parallel);

class CudaGraphStep {
 public:
  // Eager iterations before the capture: torch.cuda.graphs' own advice
  // (three warm-up iterations on the side stream).
  static constexpr int64_t kEagerIterations = 3;

  explicit CudaGraphStep(c10::Device device);  // throws Error on a build without CUDA
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  // One training iteration: eager until kEagerIterations have run, then the
  // capture (which also runs that iteration, by a replay), then replays. The
  // loss returned by a replay is the graph's static output, overwritten by
  // the next replay: read it before then.
  StepOutput run(Workload& workload, const std::vector<Batch>& micro_batches, Phases& phases);
  bool captured() const;
  // {captured, eager_iterations, replays, eager_other_shape, capture_ms, captured_shape}.
  nlohmann::json describe() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tbd
