#include "tbd/predict/embedding_exchange.h"

#include <numeric>

#include "tbd/core/error.h"

namespace tbd {

std::vector<EmbeddingExchange> embedding_exchanges(const nlohmann::json& base, EmbeddingSharding how, int ranks) {
  const auto& workload = base.value("workload", nlohmann::json::object());
  const auto& c = workload.value("configuration", nlohmann::json::object());
  if (!c.contains("table_sizes") || !c.contains("lookups_per_table") || !c.contains("embedding_dim"))
    throw Error(
        "the base records no embedding tables (table_sizes, lookups_per_table, embedding_dim): "
        "--embedding-sharding predicts a dlrm result");
  const double tables = static_cast<double>(c["table_sizes"].size());
  const auto lookups = c["lookups_per_table"].get<std::vector<double>>();
  const double ids = std::accumulate(lookups.begin(), lookups.end(), 0.0);  // per sample
  const double d = c["embedding_dim"].get<double>();
  const double batch = workload.at("options").at("batch_size").get<double>();
  const double n = ranks;
  // Table-wise: each rank sends its B samples' bags of every table to the
  // table's owner, and each owner sends back its tables' rows for all N·B
  // samples: T·B rows per rank on average. Row-wise: every rank's bags go to
  // every rank, and each sends back its partial sums of every table for all
  // N·B samples. Ids and lengths are int64, the rows fp32.
  const double copies = how == EmbeddingSharding::row ? n : 1;
  const double rows = how == EmbeddingSharding::row ? tables * n * batch : tables * batch;
  return {{"bag lengths", 8 * copies * tables * batch},
          {"ids", 8 * copies * ids * batch},
          {"pooled rows", 4 * d * rows},
          {"pooled rows' gradients", 4 * d * rows}};
}

}  // namespace tbd
