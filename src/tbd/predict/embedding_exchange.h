// The all-to-alls of dlrm's placed embedding tables (--embedding-sharding
// table|row, dist/sharded_embedding_bags.h) in one iteration of N ranks,
// from a single-process result's configuration (table sizes, lookups per
// table, dimension, batch): what one rank sends in each, on average over
// the ranks. The step waits for each, so their time adds to the iteration
// (docs/metrics.md#prediction).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

// The lookups one rank of the base does per iteration: its configuration's
// tables (rows, as capped at the run's scale), ids per sample and table,
// dimension and skew, and its batch.
struct EmbeddingLookups {
  std::string config;  // dlrm's --set config
  std::vector<int64_t> table_sizes, lookups;
  int64_t dim = 0, batch = 0;
  double skew = 1;
};
// Throws Error naming what is missing when `base` is not a dlrm result.
EmbeddingLookups embedding_lookups(const nlohmann::json& base);

struct EmbeddingExchange {
  std::string what;  // "bag lengths", "ids", "pooled rows", "pooled rows' gradients"
  double bytes = 0;  // one rank's send buffer (nccl-tests' all-to-all size)
};

// Throws Error naming what is missing when `base` is not a dlrm result.
std::vector<EmbeddingExchange> embedding_exchanges(const nlohmann::json& base, EmbeddingSharding how, int ranks);

}  // namespace tbd
