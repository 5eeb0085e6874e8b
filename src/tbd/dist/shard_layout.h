// How sharded data parallelism (ZeRO, FSDP's flat parameters) divides the
// model state among N ranks: the parameters are grouped into the gradient
// buckets the all-reduce would use (gradient_buckets.h), each bucket is one
// flat run of elements (its members back to back, in bucket order, each in
// its own memory order), padded with zeros to a multiple of N, and rank r
// owns the r-th equal slice of it. A rank's slice cuts across parameters:
// its pieces are the slice's intersections with them. One rule for the
// sharded reducer (sharded_data_parallel.h) and for tests.
#pragma once

#include <cstdint>
#include <vector>

#include "tbd/dist/gradient_buckets.h"

namespace tbd {

// Elements [param_offset, param_offset + length) of parameter `param`
// (indices into the shapes given) sit at [shard_offset, ...) of the rank's
// slice of its bucket.
struct ShardPiece {
  size_t param = 0;
  int64_t param_offset = 0;
  int64_t shard_offset = 0;
  int64_t length = 0;
};

struct ShardedBucket {
  std::vector<size_t> members;     // in bucket order (the launch order of gradient_buckets.h)
  std::vector<int64_t> offsets;    // of each member in the flat bucket
  int64_t elements = 0;            // Σ members' elements
  int64_t padded = 0;              // elements rounded up to a multiple of the ranks
  int64_t shard = 0;               // padded / ranks: every rank's slice
  std::vector<ShardPiece> pieces;  // this rank's, in flat order
};

// `ranks` >= 1, 0 <= `rank` < `ranks`. Sparse shapes are sharded like dense
// ones (ZeRO shards dense tensors; the caller densifies their gradients).
std::vector<ShardedBucket> shard_buckets(std::vector<GradientShape> shapes, int64_t bucket_bytes, int ranks, int rank);

}  // namespace tbd
