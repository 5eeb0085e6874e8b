#include "tbd/core/rng.h"

#include <torch/utils.h>

namespace tbd {

void seed_everything(uint64_t seed) { torch::manual_seed(seed); }

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace tbd
