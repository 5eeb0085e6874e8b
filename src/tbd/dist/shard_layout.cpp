#include "tbd/dist/shard_layout.h"

#include <algorithm>
#include <stdexcept>

namespace tbd {

std::vector<ShardedBucket> shard_buckets(std::vector<GradientShape> shapes, int64_t bucket_bytes, int ranks, int rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks) throw std::invalid_argument("shard_buckets: rank outside [0, ranks)");
  for (auto& s : shapes) s.sparse = false;
  std::vector<ShardedBucket> buckets;
  for (auto& members : assign_gradient_buckets(shapes, bucket_bytes)) {
    ShardedBucket b;
    b.members = std::move(members);
    for (size_t k : b.members) {
      b.offsets.push_back(b.elements);
      b.elements += shapes[k].elements;
    }
    b.padded = (b.elements + ranks - 1) / ranks * ranks;
    b.shard = b.padded / ranks;
    const int64_t begin = rank * b.shard, end = begin + b.shard;
    for (size_t i = 0; i < b.members.size(); ++i) {
      const int64_t from = std::max(begin, b.offsets[i]);
      const int64_t to = std::min(end, b.offsets[i] + shapes[b.members[i]].elements);
      if (from < to)
        b.pieces.push_back({.param = b.members[i],
                            .param_offset = from - b.offsets[i],
                            .shard_offset = from - begin,
                            .length = to - from});
    }
    buckets.push_back(std::move(b));
  }
  return buckets;
}

}  // namespace tbd
