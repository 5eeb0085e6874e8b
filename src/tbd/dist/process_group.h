// A c10d process group: TCPStore rendezvous (rank 0 hosts it), the Gloo
// backend for CPU tensors and NCCL for CUDA tensors (CUDA builds). c10d types
// stay inside the .cpp so only this file needs the c10d, Gloo and NCCL headers.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "tbd/dist/dist_environment.h"

namespace tbd {

// An all-reduce in flight.
class PendingReduce {
 public:
  virtual ~PendingReduce() = default;
  virtual void wait() = 0;  // throws Error when a peer is lost
  // True once the collective has ended (its buffers may go); never blocks.
  virtual bool done() const { return false; }
  // The collective's own duration on the device, where the backend times it
  // (NCCL: CUDA events); empty for Gloo, whose time is read on the host.
  virtual std::optional<double> device_seconds() const { return std::nullopt; }
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  // Joins the rendezvous at env.master_addr:master_port and builds the
  // backend for `device`. Throws Error when the rendezvous cannot be reached
  // within `timeout`, UsageError when this build cannot do it.
  static std::unique_ptr<ProcessGroup> connect(const DistEnvironment& env, c10::Device device,
                                               std::chrono::milliseconds timeout);
  static bool available();       // false when this build has no Gloo
  static bool nccl_available();  // true in CUDA builds that found NCCL's header

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend_name() const = 0;
  // Gloo all-reduces sparse tensors (allgathers of their indices and
  // values, then a sum); NCCL does not.
  bool sums_sparse() const { return backend_name() == "gloo"; }

  virtual void broadcast_from_rank0(std::vector<torch::Tensor>& tensors) = 0;
  // Sums `flat` across ranks in place; `on_done` runs (on a backend thread)
  // when the reduction has completed. A sparse COO tensor only where
  // sums_sparse(): its result is sparse and coalesced.
  virtual std::shared_ptr<PendingReduce> allreduce_sum(torch::Tensor flat, std::function<void()> on_done) = 0;
  // Sharded data parallelism's collectives (c10d's reduce_scatter_tensor and
  // all_gather_into_tensor): `input` holds size() equal slices; rank r's
  // `output` receives the sum over ranks of slice r. And the reverse: every
  // rank's `input` (one slice) lands at its rank's slice of `output`. Both
  // tensors stay untouched by the caller until wait() returns; a
  // reduce-scatter's `input` holds no meaningful values after it (Gloo sums
  // it in place). `on_done` (optional) runs when the collective completes
  // where the backend can tell (NCCL: in wait(); Gloo: its reduce-scatter,
  // an all-reduce); Gloo's all-gather has no completion callback, so it
  // never runs there: poll done(). The default refuses (a backend without
  // them).
  virtual std::shared_ptr<PendingReduce> reduce_scatter_sum(torch::Tensor output, torch::Tensor input,
                                                            std::function<void()> on_done = nullptr);
  virtual std::shared_ptr<PendingReduce> allgather_into(torch::Tensor output, torch::Tensor input,
                                                        std::function<void()> on_done = nullptr);
  // c10d's all-to-all over the first dimension: rank r sends rows
  // input[Σ input_splits[<q] … +input_splits[q]) to rank q and receives rank
  // q's part for it into the same place of `output` by output_splits (both
  // in rows; every rank's splits must agree pairwise). Model-parallel
  // embedding tables exchange ids and pooled embeddings with it.
  virtual std::shared_ptr<PendingReduce> all_to_all(torch::Tensor output, torch::Tensor input,
                                                    std::vector<int64_t> output_splits,
                                                    std::vector<int64_t> input_splits);
  // The largest value any rank passes: a collective decision (stop measuring).
  virtual int max_across_ranks(int value) = 0;
  // Every rank publishes a text under `key`; rank 0 collects all of them
  // (other ranks get an empty list).
  virtual std::vector<std::string> gather_text(const std::string& key, const std::string& value) = 0;
  virtual void barrier() = 0;
};

}  // namespace tbd
