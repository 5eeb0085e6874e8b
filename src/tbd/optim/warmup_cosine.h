// The learning-rate schedule of LLM pre-training (MLPerf's Llama 3.1 8B
// rules, torchtitan, nanoGPT): a linear warm-up from 0 to the peak, then a
// cosine decay from the peak to min_ratio × peak, held there afterwards.
// Applied once per optimizer step (docs/workloads.md#llama).
#pragma once

#include <cstdint>

#include <torch/optim/optimizer.h>

namespace tbd {

struct WarmupCosine {
  double peak = 3e-4;
  int64_t warmup_steps = 200;
  int64_t decay_steps = 800;
  double min_ratio = 0.0;

  // The rate of optimizer step `step` (1 is the first): peak·step/warmup
  // while step ≤ warmup (none when warmup is 0); then min + (peak − min)·(1 + cos(π·p))/2 with
  // p = (step − warmup)/decay, capped at 1.
  double at(int64_t step) const;
};

// Sets every parameter group's learning rate.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace tbd
