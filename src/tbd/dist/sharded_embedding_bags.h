// dlrm's embedding tables placed across the data-parallel ranks instead of
// replicated (--embedding-sharding; the hybrid parallelism of the DLRM paper
// and TorchRec): the dense layers stay data-parallel, each table lives on one
// rank (table-wise) or is split by rows over all of them (row-wise), and the
// lookups travel by c10d's all-to-all:
//   table-wise  each rank sends every table's bags (lengths, then ids) to the
//               table's owner; the owner pools them for all N·B samples and
//               sends each rank its B rows back;
//   row-wise    each rank sends its bags to every rank; each pools the ids
//               that fall in its rows (a partial sum) for all N·B samples and
//               sends each rank its B rows, which it sums over the N senders.
// The return trip is differentiable: backward sends the pooled embeddings'
// gradients to where they were pooled, scaled by 1/N so a table's update is
// the one all-reducing (averaging) its gradient would give, as the dense
// layers' is (TorchRec sums instead: its tables learn N times faster). The
// tables' gradients stay on their rank (Workload::rank_local_parameters()).
// Each rank draws its tables' or rows' initial values as the replicated model
// would (nn::init_embedding_rows), so the three placements train alike.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>

#include "tbd/core/options.h"
#include "tbd/dist/collective_log.h"
#include "tbd/nn/dlrm.h"

namespace tbd {

class ProcessGroup;

// Table t's owner: the largest tables first, each to the rank holding the
// fewest rows so far (ties: the lowest rank), so ranks balance by bytes.
std::vector<int> place_tables_by_rows(const std::vector<int64_t>& rows, int ranks);
// Rank r's rows of a table of `rows` rows split over `ranks`: [first, end).
std::pair<int64_t, int64_t> row_range(int64_t rows, int rank, int ranks);
// The rows [first, end) of each table that rank `rank` of `ranks` holds
// under `how`: replicated every row; table-wise all rows of the tables
// place_tables_by_rows gives it and none of the others'; row-wise its
// row_range of each. ShardedEmbeddingBags builds exactly these.
std::vector<std::pair<int64_t, int64_t>> rows_held(const std::vector<int64_t>& rows, EmbeddingSharding how, int rank,
                                                   int ranks);
// Σ over tables of the rows held: the rank's part of the tables.
int64_t total_rows(const std::vector<std::pair<int64_t, int64_t>>& held);

class ShardedEmbeddingBagsImpl : public torch::nn::Module, public nn::PooledEmbeddings {
 public:
  // `how` is table or row. Builds only this rank's tables or rows.
  ShardedEmbeddingBagsImpl(const nn::DLRMConfig& config, EmbeddingSharding how, ProcessGroup& group);
  std::vector<torch::Tensor> pooled(at::TensorList bags) override;

  EmbeddingSharding sharding() const { return how_; }
  // This rank's part of each table: rows [first, end) (table-wise: all rows
  // of its own tables, none of the others').
  std::pair<int64_t, int64_t> rows_held(size_t table) const { return held_[table]; }
  // The all-to-alls of the lookups and their gradients, for the comm probe.
  CollectiveLog& collectives() { return log_; }

 private:
  std::vector<torch::Tensor> table_wise(at::TensorList bags);
  std::vector<torch::Tensor> row_wise(at::TensorList bags);
  torch::Tensor pool(size_t table, const torch::Tensor& ids, const torch::Tensor& offsets);

  EmbeddingSharding how_;
  ProcessGroup& group_;
  CollectiveLog log_;
  int64_t dim_;
  std::vector<int> owner_;                         // table-wise
  std::vector<std::pair<int64_t, int64_t>> held_;  // per table
  // This rank's EmbeddingBag of each table (registered by the table's index,
  // so the parameter names are the replicated model's); null where it holds none.
  std::vector<torch::nn::EmbeddingBag> local_;
};
TORCH_MODULE(ShardedEmbeddingBags);

}  // namespace tbd
