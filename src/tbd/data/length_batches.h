// Batches of similar-length sentences (bucketing), so little compute goes to
// padding. Each epoch: shuffle the examples, sort them stably by length,
// cut the sorted list into batches, shuffle the order of the batches (as
// fairseq does). A batch holds either a fixed number of sentences or as many
// as fit a token budget counted with padding: count × longest ≤ budget.
// Batch k of the endless stream is batch k mod n of epoch k / n; the number
// of batches n per epoch depends on the lengths only. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace tbd {

class LengthBatches {
 public:
  enum class Limit { sentences, tokens };

  // lengths[i]: the length that pads example i (e.g. max of source and
  // target). An example longer than a token budget forms a batch alone.
  // Throws std::invalid_argument for no examples or a size below 1.
  LengthBatches(std::vector<int64_t> lengths, Limit limit, int64_t size, uint64_t seed);

  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  std::vector<int64_t> batch(int64_t index);  // example indices of stream batch `index`

 private:
  using Plan = std::vector<std::vector<int64_t>>;
  std::shared_ptr<const Plan> epoch(int64_t e);
  Plan make_plan(int64_t e) const;

  std::vector<int64_t> lengths_;
  Limit limit_;
  int64_t size_;
  uint64_t seed_;
  int64_t batches_per_epoch_ = 0;
  std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<const Plan>> cache_;  // a few recent epochs
};

}  // namespace tbd
