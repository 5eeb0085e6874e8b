// Synthetic ImageNet-style classification batches, shared by the image
// classifiers (resnet50, inception3): normalised pixels are roughly standard
// normal, labels uniform over the classes.
#pragma once

#include <cstdint>

#include "tbd/data/batch_pool.h"

namespace tbd {

// A pool of 4 distinct batches of [batch, 3, image_size, image_size] images,
// resident on `device`; the same seed gives the same pool.
BatchPool synthetic_image_batches(int64_t batch_size, int64_t classes, int image_size, uint64_t seed,
                                  c10::Device device);

}  // namespace tbd
