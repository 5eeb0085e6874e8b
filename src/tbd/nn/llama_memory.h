// The memory of one Llama training step from its shapes alone (`tbd plan
// llama`): the model state of fp32 AdamW training, the tensors autograd saves
// per micro-batch as tbd's Llama (nn/llama.cpp) saves them, with and without
// activation checkpointing, and the step's peak. Nothing is allocated, so the
// plan of 70B is as cheap as tiny's; tests/llama_memory_test.cpp checks it
// against the memory probe. docs/metrics.md#memory-plan gives the formulas.
// With ranks and a --sharding strategy it is one rank's of a sharded
// data-parallel run: ZeRO's model state per rank (core/zero_memory.h, the
// blocks as the wrapping units and the embeddings, head and final norm as
// the root, as tbd's ShardedDataParallel holds them), and the units and
// gradient buckets whole at the peak.
#pragma once

#include <cstdint>

#include "tbd/core/memory_plan.h"
#include "tbd/core/options.h"
#include "tbd/nn/llama.h"

namespace tbd::nn {

struct LlamaStep {
  int64_t batch = 1;       // sequences per micro-batch, each config.context tokens
  int64_t grad_accum = 1;  // micro-batches per optimizer step
  Precision precision = Precision::fp32;
  // RMSNorm's kernel: on CUDA ATen's fused one saves its input and 1/rms; on
  // the CPU rms_norm is composite and also keeps x/rms and its output.
  bool fused_rms_norm = false;
  int ranks = 1;  // data-parallel ranks; each runs `batch` sequences
  Sharding sharding = Sharding::none;
  double bucket_bytes = 25.0 * 1024 * 1024;  // --bucket-mb: a gradient bucket, whole while on the wire
};

MemoryPlan llama_memory_plan(const LlamaConfig& config, const LlamaStep& step);

}  // namespace tbd::nn
