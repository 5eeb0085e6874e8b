// The random source of the built-in games: splitmix64, written out so that an
// episode is the same for a seed on every platform and standard library
// (std::uniform_real_distribution is not).
#pragma once

#include <cstdint>

namespace tbd::envs {

class GameRng {
 public:
  explicit GameRng(uint64_t seed = 0) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {  // in [lo, hi)
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  bool coin() { return (next() >> 63) != 0; }

 private:
  uint64_t state_;
};

}  // namespace tbd::envs
