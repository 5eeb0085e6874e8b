// The all-to-alls of dlrm's placed embedding tables (--embedding-sharding
// table|row, dist/sharded_embedding_bags.h) in one iteration of N ranks,
// from a single-process result's configuration (table sizes, lookups per
// table, dimension, batch): what one rank sends in each, on average over
// the ranks. The step waits for each, so their time adds to the iteration
// (docs/metrics.md#prediction).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

struct EmbeddingExchange {
  std::string what;  // "bag lengths", "ids", "pooled rows", "pooled rows' gradients"
  double bytes = 0;  // one rank's send buffer (nccl-tests' all-to-all size)
};

// Throws Error naming what is missing when `base` is not a dlrm result.
std::vector<EmbeddingExchange> embedding_exchanges(const nlohmann::json& base, EmbeddingSharding how, int ranks);

}  // namespace tbd
