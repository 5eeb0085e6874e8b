// What one rank of dlrm holds in a training step (`tbd plan dlrm --nproc N
// --embedding-sharding P`), from the configuration's shapes: its share of
// the embedding tables and their optimizer state, the dense layers (every
// rank holds them whole), the step's sparse gradient rows (one per lookup
// landing on this rank's rows, not yet coalesced), and the buffers the
// lookups travel in. docs/metrics.md#memory-plan defines the terms.
#pragma once

#include <cstdint>

#include "tbd/core/memory_plan.h"
#include "tbd/core/options.h"
#include "tbd/nn/dlrm.h"

namespace tbd {

struct DLRMStep {
  int64_t batch = 0;       // per rank and micro-batch
  int64_t grad_accum = 1;  // micro-batches per step: their sparse gradients add up uncoalesced
  int ranks = 1;
  EmbeddingSharding placement = EmbeddingSharding::replicate;
  bool adagrad = false;  // an accumulator per weight (dcnv2); SGD keeps no state
  int rank = 0;          // the rank planned for (table-wise ranks differ)
};

MemoryPlan dlrm_memory_plan(const nn::DLRMConfig& config, const DLRMStep& step);

}  // namespace tbd
