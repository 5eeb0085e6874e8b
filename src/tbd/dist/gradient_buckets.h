// How data-parallel gradients are grouped for the all-reduce, as PyTorch's
// DDP groups them: parameters in reverse order (roughly the order backward
// produces their gradients), a bucket closing when the next parameter would
// take it past `bucket_bytes` or has another dtype or device. A sparse
// gradient (an embedding's, with sparse gradients on) joins no bucket: it is
// all-reduced on its own, sparse, as DDP does on Gloo. One rule for the
// gradient reducer and for the data-parallel prediction (predict/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

struct GradientShape {
  int64_t elements = 0;
  int64_t element_size = 4;  // bytes
  std::string kind;          // dtype and device: parameters of different kinds never share a bucket
  bool sparse = false;       // reduced on its own as a sparse tensor, in no bucket
};

// Each bucket lists its members (indices into `shapes`) in the order they
// joined it; buckets come in launch order (the last parameters first).
// Sparse shapes are in none.
std::vector<std::vector<size_t>> assign_gradient_buckets(const std::vector<GradientShape>& shapes,
                                                         int64_t bucket_bytes);

}  // namespace tbd
