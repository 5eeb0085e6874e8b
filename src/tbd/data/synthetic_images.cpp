#include "tbd/data/synthetic_images.h"

#include <ATen/CPUGeneratorImpl.h>

namespace tbd {

BatchPool synthetic_image_batches(int64_t batch_size, int64_t classes, int image_size, uint64_t seed,
                                  c10::Device device) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return synthetic_pool([&] {
    Batch b;
    b.inputs = {torch::randn({batch_size, 3, image_size, image_size}, gen).to(device)};
    b.targets = {torch::randint(classes, {batch_size}, gen, torch::kInt64).to(device)};
    b.samples = batch_size;
    return b;
  });
}

}  // namespace tbd
