// Which part of a dataset one data-parallel process reads. Every rank orders
// the data identically (same seed); rank r of W then takes global batches
// r, r+W, r+2W, ... of that one stream: PyTorch's DistributedSampler at batch
// granularity, so within an epoch the ranks' shards are disjoint and together
// cover the data once. A single process is rank 0 of 1 and reads everything.
#pragma once

#include <cstdint>

namespace tbd {

struct Shard {
  int rank = 0;
  int world = 1;

  // The global stream batch that is this rank's `local`-th batch.
  int64_t global_batch(int64_t local) const { return local * world + rank; }
};

}  // namespace tbd
