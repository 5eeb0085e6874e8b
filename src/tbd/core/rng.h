// Seeding. One run seed drives LibTorch's generators and every derived stream
// (data order, augmentation per batch), so runs are repeatable.
#pragma once

#include <cstdint>

namespace tbd {

void seed_everything(uint64_t seed);

// A well-mixed seed for stream `stream` of run seed `seed` (splitmix64).
uint64_t derive_seed(uint64_t seed, uint64_t stream);

}  // namespace tbd
