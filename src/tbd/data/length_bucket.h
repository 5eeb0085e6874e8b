// Length buckets (docs/workloads.md#length-buckets): the variable-length
// workloads pad each batch's lengths (tokens, frames) up to a multiple of
// their `length_bucket` setting, so a run sees a bounded set of shapes.
#pragma once

#include <cstdint>

namespace tbd {

// A batch's longest length `n` padded up to a multiple of `bucket` (>= 1; 1: n itself).
inline int64_t bucketed_length(int64_t n, int64_t bucket) { return (n + bucket - 1) / bucket * bucket; }

}  // namespace tbd
