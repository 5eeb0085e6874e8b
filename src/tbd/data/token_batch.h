// A batch of language-model windows on the host, as every token reader
// (byte-level text, token files) hands them out.
#pragma once

#include <torch/types.h>

namespace tbd {

struct Batch;     // tbd/core/workload.h
class BatchPool;  // tbd/data/batch_pool.h

struct TokenBatch {       // int64 on the CPU
  torch::Tensor inputs;   // [B, T]
  torch::Tensor targets;  // [B, T] the next token of each input position
};

// The batch as a language model trains on it, on `device`; samples: tokens.
Batch to_training_batch(const TokenBatch& b, c10::Device device);

// The synthetic data of the language models (gpt, llama): a pool of batches
// of `batch` windows of context + 1 token ids over [0, vocabulary), drawn
// by Zipf's law (the word frequencies of natural text) from `seed`,
// resident on `device`.
BatchPool zipf_token_pool(uint64_t seed, int64_t vocabulary, int64_t batch, int64_t context, c10::Device device);

}  // namespace tbd
