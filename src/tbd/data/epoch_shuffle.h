// Sample order across epochs: position k of the endless stream is item
// perm_e[k mod n] with e = k / n and perm_e a seeded shuffle of epoch e.
// Thread-safe; every caller gets the same answer for the same k.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace tbd {

class EpochShuffle {
 public:
  EpochShuffle(int64_t items, uint64_t seed);
  int64_t item(int64_t position);  // which item sits at this stream position
  int64_t items() const { return items_; }

 private:
  std::shared_ptr<const std::vector<int64_t>> epoch(int64_t e);
  int64_t items_;
  uint64_t seed_;
  std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> cache_;  // a few recent epochs
};

}  // namespace tbd
