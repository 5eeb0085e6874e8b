#include "tbd/data/length_batches.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "tbd/core/rng.h"

namespace tbd {

LengthBatches::LengthBatches(std::vector<int64_t> lengths, Limit limit, int64_t size, uint64_t seed)
    : lengths_(std::move(lengths)), limit_(limit), size_(size), seed_(seed) {
  if (lengths_.empty()) throw std::invalid_argument("LengthBatches needs at least one example");
  if (size_ < 1) throw std::invalid_argument("LengthBatches needs a batch size of at least 1");
  batches_per_epoch_ = static_cast<int64_t>(make_plan(0).size());
}

LengthBatches::Plan LengthBatches::make_plan(int64_t e) const {
  std::vector<int64_t> order(lengths_.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(e)));
  std::shuffle(order.begin(), order.end(), rng);  // random order among equal lengths
  std::stable_sort(order.begin(), order.end(), [this](int64_t a, int64_t b) { return lengths_[a] < lengths_[b]; });
  Plan plan;
  std::vector<int64_t> current;
  int64_t longest = 0;
  for (int64_t i : order) {
    const int64_t l = std::max<int64_t>(lengths_[i], 1);
    const bool full = limit_ == Limit::sentences
                          ? static_cast<int64_t>(current.size()) == size_
                          : !current.empty() && static_cast<int64_t>(current.size() + 1) * std::max(longest, l) > size_;
    if (full) {
      plan.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(i);
    longest = std::max(longest, l);
  }
  if (!current.empty()) plan.push_back(std::move(current));
  std::shuffle(plan.begin(), plan.end(), rng);
  return plan;
}

std::shared_ptr<const LengthBatches::Plan> LengthBatches::epoch(int64_t e) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(e);
  if (it != cache_.end()) return it->second;
  auto plan = std::make_shared<const Plan>(make_plan(e));
  cache_.emplace(e, plan);
  while (cache_.size() > 3) cache_.erase(cache_.begin());  // workers run a few batches apart
  return plan;
}

std::vector<int64_t> LengthBatches::batch(int64_t index) {
  const auto plan = epoch(index / batches_per_epoch_);
  return (*plan)[static_cast<size_t>(index % batches_per_epoch_)];
}

}  // namespace tbd
