// ZeRO's model state per rank (Rajbhandari et al. 2020): what each
// --sharding strategy divides among N data-parallel ranks, as tbd's
// ShardedDataParallel (dist/sharded_data_parallel.h) holds it. One
// definition for the plan from a model's shapes (`tbd plan --sharding`)
// and the prediction from a measured base (`tbd predict --sharding`);
// docs/distributed.md#memory-per-rank gives the table.
//
//   weights    W                                      none, optimizer, gradients
//              W_root + (W - W_root)/N + gathered      full (gathered: the units
//                                                      whole at once, computing and prefetched)
//   gradients  G (none, optimizer), G/N (gradients, full)
//   optimizer  O (none), O/N (the others)
#pragma once

#include <functional>
#include <optional>

#include "tbd/core/options.h"

namespace tbd {

// ZeRO's stage of a --sharding strategy: none 0, optimizer 1, gradients 2, full 3.
int zero_stage(Sharding sharding);

// The most data-parallel ranks a plan or a prediction speaks of (--nproc's
// bound), and the fewest ranks, a power of two up to it, for which
// `fits(ranks)` holds; nullopt where none does.
inline constexpr int kMostRanks = 65536;
std::optional<int> fewest_ranks(const std::function<bool(int)>& fits);

struct ModelStateBytes {
  double weights = 0, gradients = 0, optimizer_state = 0;
  double total() const { return weights + gradients + optimizer_state; }
};

// A model's wrapping units (ZeRO-3 gathers one at a time): the share of the
// trainable elements outside every unit (the root, kept whole), the largest
// unit's bytes as gathered (under mixed precision its linear weights in
// bf16) and as its gradients are reduce-scattered (fp32), and how many
// units there are.
struct WrappingUnitBytes {
  double root_share = 1;
  double largest_unit = 0;
  double largest_unit_gradients = 0;
  long long count = 0;
};

struct ShardedModelState : ModelStateBytes {
  double gathered = 0;  // full: the units whole at once, on top of the weights' shards
};

ShardedModelState sharded_model_state(const ModelStateBytes& whole, const WrappingUnitBytes& units, int ranks,
                                      Sharding sharding);

// Of `alive` bytes of gradients at a moment of backward, what a rank holds.
// Sharded (gradients, full), the reduce-scattered ones are slices (1/N), but
// the buckets still on the wire or being filled stay whole: up to three (two
// reduce-scatters in flight and one filling), a bucket being `bucket_bytes`
// (--bucket-mb) or, with full, a unit if larger.
double sharded_gradients_alive(double alive, double bucket_bytes, const WrappingUnitBytes& units, int ranks,
                               Sharding sharding);

}  // namespace tbd
