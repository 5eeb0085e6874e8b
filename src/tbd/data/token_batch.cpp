#include "tbd/data/token_batch.h"

#include <random>

#include "tbd/data/batch_pool.h"
#include "tbd/data/synthetic_text.h"

namespace tbd {

Batch to_training_batch(const TokenBatch& b, c10::Device device) {
  Batch batch;
  batch.inputs = {to_device(b.inputs, device)};
  batch.targets = {to_device(b.targets, device)};
  batch.samples = b.inputs.numel();
  return batch;
}

BatchPool zipf_token_pool(uint64_t seed, int64_t vocabulary, int64_t batch, int64_t context, c10::Device device) {
  std::mt19937_64 rng(seed);
  ZipfWords words(0, vocabulary);
  return synthetic_pool([&] {
    auto window = torch::empty({batch, context + 1}, torch::kInt64);
    auto w = window.accessor<int64_t, 2>();
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t j = 0; j <= context; ++j) w[r][j] = words(rng);
    return to_training_batch(
        TokenBatch{window.narrow(1, 0, context).contiguous(), window.narrow(1, 1, context).contiguous()}, device);
  });
}

}  // namespace tbd
