#include "tbd/core/zero_memory.h"

#include <algorithm>

namespace tbd {

int zero_stage(Sharding sharding) {
  switch (sharding) {
    case Sharding::none: return 0;
    case Sharding::optimizer: return 1;
    case Sharding::gradients: return 2;
    case Sharding::full: return 3;
  }
  return 0;
}

std::optional<int> fewest_ranks(const std::function<bool(int)>& fits) {
  for (int n = 1; n <= kMostRanks; n *= 2)
    if (fits(n)) return n;
  return std::nullopt;
}

ShardedModelState sharded_model_state(const ModelStateBytes& whole, const WrappingUnitBytes& units, int ranks,
                                      Sharding s) {
  const double n = ranks;
  ShardedModelState m;
  m.weights = s == Sharding::full ? whole.weights * units.root_share + whole.weights * (1 - units.root_share) / n
                                  : whole.weights;
  m.gathered = s == Sharding::full ? static_cast<double>(std::min<long long>(2, units.count)) * units.largest_unit : 0;
  m.gradients = s == Sharding::gradients || s == Sharding::full ? whole.gradients / n : whole.gradients;
  m.optimizer_state = s == Sharding::none ? whole.optimizer_state : whole.optimizer_state / n;
  return m;
}

double sharded_gradients_alive(double alive, double bucket_bytes, const WrappingUnitBytes& units, int ranks,
                               Sharding s) {
  if (s != Sharding::gradients && s != Sharding::full) return alive;
  const double bucket = s == Sharding::full ? std::max(bucket_bytes, units.largest_unit_gradients) : bucket_bytes;
  const double whole = std::min(alive, 3 * bucket);
  return whole + (alive - whole) / ranks;
}

}  // namespace tbd
