// MovieLens ratings as implicit feedback (He et al. 2017): every
// `user,item,rating,timestamp` line of ratings.csv is one positive
// interaction. Raw ids are mapped to dense indices by sorting the distinct
// raw ids, so the mapping does not depend on line order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"

namespace tbd {

struct Batch;  // tbd/core/workload.h

class MovieLensRatings {
 public:
  // Reads the whole file. An optional header line is checked to be
  // MovieLens's `userId,movieId,rating,timestamp` (any letter case) and
  // skipped. Throws UsageError for a missing file, a folder or a device;
  // Error naming file and line for another header or a malformed line; Error
  // for a file without ratings.
  explicit MovieLensRatings(const std::string& path);

  int64_t users() const { return users_; }
  int64_t items() const { return items_; }
  int64_t size() const { return static_cast<int64_t>(user_.size()); }
  int64_t user(int64_t i) const { return user_[static_cast<size_t>(i)]; }
  int64_t item(int64_t i) const { return item_[static_cast<size_t>(i)]; }
  // Whether the user rated the item (negative sampling skips those).
  bool rated(int64_t user, int64_t item) const;

 private:
  int64_t users_ = 0, items_ = 0;
  std::vector<int64_t> user_, item_;
  std::vector<int64_t> user_begin_;   // CSR over users: [begin[u], begin[u+1]) in rated_items_
  std::vector<int64_t> rated_items_;  // sorted within each user
};

struct InteractionBatch {
  torch::Tensor users, items;  // [B] int64
  torch::Tensor labels;        // [B] float: 1 for a rating, 0 for a sampled negative
};

// The batch as NCF trains on it: inputs users, items; target labels; on `device`.
Batch to_training_batch(const InteractionBatch& b, c10::Device device);

// Training samples as NCF makes them: each positive (in a seeded shuffle per
// epoch) followed by `negatives` items the user did not rate, drawn
// uniformly. Stream position p is slot p mod (1 + negatives) of positive
// p / (1 + negatives); a batch is B consecutive positions.
class InteractionBatches {
 public:
  InteractionBatches(std::shared_ptr<const MovieLensRatings> ratings, int64_t batch_size, int64_t negatives,
                     uint64_t seed, int workers, Shard shard = {});
  InteractionBatch next() { return prefetcher_.next(); }

 private:
  InteractionBatch make(int64_t batch_index);
  std::shared_ptr<const MovieLensRatings> ratings_;
  int64_t batch_size_, negatives_;
  uint64_t seed_;
  EpochShuffle order_;
  Prefetcher<InteractionBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
