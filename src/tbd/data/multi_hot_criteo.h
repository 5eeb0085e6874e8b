// MLPerf Training DLRMv2's data (the TorchRec reference's
// MultiHotCriteoIterDataPipe format): a folder of days, each three files
// that NumPy wrote,
//   day_N_dense.npy                float32 [rows, 13]: log(x + 3) of the counts
//   day_N_labels.npy               int32 [rows, 1] (or [rows]): 0/1 clicks
//   day_N_sparse_multi_hot.npz     members 0.npy … 25.npy, int32 [rows, L_k]:
//                                  the L_k ids of feature k for each sample
// (materialize_synthetic_multihot_dataset.py writes them from Criteo 1TB).
// The arrays are memory-mapped and read in place. Days are read in the
// order of their names, one stream of samples; data-parallel rank r of W
// takes the stream's batches r, r+W, ... (shard.h), starting over at the end.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "tbd/data/mapped_file.h"
#include "tbd/data/npy.h"
#include "tbd/data/shard.h"

namespace tbd {

struct Batch;  // tbd/core/workload.h

struct MultiHotBatch {
  torch::Tensor dense;             // [B, 13] float
  std::vector<torch::Tensor> ids;  // per feature [B, L_k] int64, each id modulo its table's rows
  torch::Tensor labels;            // [B] float 0/1
};

// The batch as DLRM trains on it: dense, then each table's bags (embedding_bags.h).
Batch to_training_batch(const MultiHotBatch& b, c10::Device device);

class MultiHotCriteoBatches {
 public:
  // True when `path` is a folder holding a *_sparse_multi_hot.npz file.
  static bool is_dataset(const std::string& path);

  // published_rows: each feature's table size in the published configuration;
  // an id outside [0, published_rows) is an error naming file, feature and
  // sample. table_sizes: the run's tables (capped at small scales), which take
  // each id modulo their size. Throws UsageError/Error naming the file when a
  // day is missing a file or its arrays disagree.
  MultiHotCriteoBatches(const std::string& folder, std::vector<int64_t> published_rows,
                        std::vector<int64_t> table_sizes, int64_t batch_size, Shard shard = {});
  MultiHotBatch next();

  const std::vector<int64_t>& multi_hot_sizes() const { return multi_hot_sizes_; }
  int64_t samples() const { return samples_; }
  int64_t distinct_shapes() const { return 1; }  // every batch is [B, 13] and [B, L_k]

 private:
  struct Day {
    Day(std::string dense, std::string labels, std::string sparse)
        : dense_path(std::move(dense)),
          labels_path(std::move(labels)),
          sparse_path(std::move(sparse)),
          dense_file(dense_path),
          labels_file(labels_path),
          sparse_file(sparse_path) {}
    std::string dense_path, labels_path, sparse_path;
    MappedFile dense_file, labels_file, sparse_file;
    NpyArray dense, labels;
    std::vector<NpyArray> features;
    int64_t first_sample = 0;  // in the stream of all days
  };
  void read_sample(int64_t sample, MultiHotBatch& b, int64_t row) const;

  std::vector<Day> days_;
  std::vector<int64_t> published_rows_, table_sizes_, multi_hot_sizes_;
  int64_t batch_size_, samples_ = 0, next_local_ = 0;
  Shard shard_;
};

}  // namespace tbd
