#include "tbd/predict/embedding_exchange.h"

#include <numeric>

#include "tbd/core/error.h"

namespace tbd {

EmbeddingLookups embedding_lookups(const nlohmann::json& base) {
  const auto& workload = base.value("workload", nlohmann::json::object());
  const auto& c = workload.value("configuration", nlohmann::json::object());
  if (!c.contains("table_sizes") || !c.contains("lookups_per_table") || !c.contains("embedding_dim"))
    throw Error(
        "the base records no embedding tables (table_sizes, lookups_per_table, embedding_dim): "
        "--embedding-sharding predicts a dlrm result");
  EmbeddingLookups l;
  l.config = c.value("config", std::string("kaggle"));
  l.table_sizes = c["table_sizes"].get<std::vector<int64_t>>();
  l.lookups = c["lookups_per_table"].get<std::vector<int64_t>>();
  l.dim = c["embedding_dim"].get<int64_t>();
  l.skew = c.value("lookup_skew", 1.0);
  l.batch = workload.at("options").at("batch_size").get<int64_t>();
  if (l.lookups.size() != l.table_sizes.size())
    throw Error("the base's lookups_per_table has " + std::to_string(l.lookups.size()) + " entries for " +
                std::to_string(l.table_sizes.size()) + " tables: the file was changed by hand or is damaged");
  return l;
}

std::vector<EmbeddingExchange> embedding_exchanges(const nlohmann::json& base, EmbeddingSharding how, int ranks) {
  const EmbeddingLookups l = embedding_lookups(base);
  const double tables = static_cast<double>(l.table_sizes.size());
  const double ids = static_cast<double>(std::accumulate(l.lookups.begin(), l.lookups.end(), int64_t{0}));
  const double d = static_cast<double>(l.dim), batch = static_cast<double>(l.batch);
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
