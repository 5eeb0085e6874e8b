// The memory per rank of a sharded data-parallel run (--sharding, ZeRO
// stages 0-3), predicted from one single-process result
// (docs/metrics.md#prediction): ZeRO's model-state formulas
// (core/zero_memory.h) applied to the weights, gradients and optimizer
// state the base measured, and the rest of the base's peak (activations,
// workspace, inputs) kept as it is, since a rank's batch and model are the
// base's.
//
// The peak per rank is the base's peak with each of these three parts, as
// the base held them at its peak, replaced by its sharded size; of the
// gradients alive at the peak, up to three buckets stay whole (on the wire
// or being filled: sharded_data_parallel.h's rate limit). With full, two
// units are gathered at the peak, except at a backward peak before any
// gradient exists (the head's backward, before the first unit is gathered
// again), where the forward's peak with two units gathered is the other
// candidate.
#pragma once

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"

namespace tbd {

// `device_bytes` > 0: also whether the predicted peak fits a device of that
// many bytes, and the fewest ranks (a power of two) at which it would.
// Throws Error naming what the base lacks (a memory breakdown, a gradients
// section; for full, the model's wrapping units).
// `bucket_bytes`: --bucket-mb's bytes, the size of a gradient bucket.
nlohmann::json predict_sharded_memory(const nlohmann::json& base, int ranks, Sharding sharding, long long device_bytes,
                                      double bucket_bytes);

}  // namespace tbd
