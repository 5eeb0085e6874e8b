// A batch of language-model windows on the host, as every token reader
// (byte-level text, token files) hands them out.
#pragma once

#include <torch/types.h>

namespace tbd {

struct Batch;  // tbd/core/workload.h

struct TokenBatch {       // int64 on the CPU
  torch::Tensor inputs;   // [B, T]
  torch::Tensor targets;  // [B, T] the next token of each input position
};

// The batch as a language model trains on it, on `device`; samples: tokens.
Batch to_training_batch(const TokenBatch& b, c10::Device device);

}  // namespace tbd
