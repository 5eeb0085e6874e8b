#include "tbd/data/epoch_shuffle.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "tbd/core/rng.h"

namespace tbd {

EpochShuffle::EpochShuffle(int64_t items, uint64_t seed) : items_(items), seed_(seed) {
  if (items <= 0) throw std::invalid_argument("EpochShuffle needs at least one item");
}

std::shared_ptr<const std::vector<int64_t>> EpochShuffle::epoch(int64_t e) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(e);
  if (it != cache_.end()) return it->second;
  auto perm = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(items_));
  std::iota(perm->begin(), perm->end(), 0);
  std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(e)));
  std::shuffle(perm->begin(), perm->end(), rng);
  cache_.emplace(e, perm);
  // Workers run at most a few batches apart: keep the newest epochs only.
  while (cache_.size() > 3) cache_.erase(cache_.begin());
  return perm;
}

int64_t EpochShuffle::item(int64_t position) {
  const auto perm = epoch(position / items_);  // shared ownership: safe after eviction
  return (*perm)[static_cast<size_t>(position % items_)];
}

}  // namespace tbd
