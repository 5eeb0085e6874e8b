#include "tbd/data/token_batch.h"

#include "tbd/data/batch_pool.h"

namespace tbd {

Batch to_training_batch(const TokenBatch& b, c10::Device device) {
  Batch batch;
  batch.inputs = {to_device(b.inputs, device)};
  batch.targets = {to_device(b.targets, device)};
  batch.samples = b.inputs.numel();
  return batch;
}

}  // namespace tbd
