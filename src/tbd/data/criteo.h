// The Criteo TSV format (Kaggle Display Advertising Challenge, Terabyte):
// per line a 0/1 label, 13 integer features and 26 categorical features as
// 32-bit hex ids, tab-separated. Parsed as facebookresearch/dlrm does: an
// empty field is 0, negative integers are clipped to 0, dense features become
// log(1 + x), and a hex id becomes its value modulo the table size.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <torch/types.h>

#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"

namespace tbd {

struct Batch;  // tbd/core/workload.h

constexpr int kCriteoDense = 13;
constexpr int kCriteoSparse = 26;

struct CriteoBatch {
  torch::Tensor dense;   // [B, 13] float, log(1 + x)
  torch::Tensor sparse;  // [B, 26] int64, id mod table size
  torch::Tensor labels;  // [B] float 0/1
};

// The batch as DLRM trains on it: inputs dense, then each table's ids and
// offsets (bags of one id, embedding_bags.h); target labels; on `device`.
Batch to_training_batch(const CriteoBatch& b, c10::Device device);

// One line into row `row` of the batch's tensors; throws Error naming
// `where` (file:line) when the line is malformed.
void parse_criteo_line(const std::string& line, const std::string& where, const std::vector<int64_t>& table_sizes,
                       CriteoBatch& batch, int64_t row);

// Reads the file front to back, batch after batch, starting over at the end
// (an epoch). Lines are parsed in one pipeline thread, ahead of training.
// Data-parallel rank r of W keeps the data lines r, r+W, r+2W, ... (strided
// rows, as DistributedSampler without shuffling), so shards are disjoint.
class CriteoBatches {
 public:
  // Throws UsageError when the file is missing or empty.
  CriteoBatches(std::string path, std::vector<int64_t> table_sizes, int64_t batch_size, Shard shard = {});
  CriteoBatch next() { return prefetcher_.next(); }  // throws Error naming file and line

 private:
  CriteoBatch make(int64_t batch_index);
  std::string path_;
  std::vector<int64_t> table_sizes_;
  int64_t batch_size_;
  std::ifstream in_;
  int64_t line_number_ = 0;
  Shard shard_;
  int64_t data_lines_in_pass_ = 0;      // non-blank lines seen since the file was (re)started
  int64_t rows_in_pass_ = 0;            // of them, rows this rank parsed
  Prefetcher<CriteoBatch> prefetcher_;  // last: its thread uses the members above
};

}  // namespace tbd
