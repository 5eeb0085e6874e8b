// Whether this thread is re-running a forward pass inside backward
// (activation checkpointing, src/tbd/nn/activation_checkpoint.h). The flops
// probe reads it to count that work apart: model FLOPs exclude it (MFU),
// hardware FLOPs include it (HFU). A thread-local flag rather than a named
// RecordFunction scope because the operator observers watch FUNCTION scopes
// only, and the recomputed operators run on the thread that runs the
// checkpoint's backward (the caller's on the CPU, the device's autograd
// thread on CUDA), where the scope sets it.
#pragma once

namespace tbd {

class RecomputationScope {
 public:
  RecomputationScope() { ++depth(); }
  ~RecomputationScope() { --depth(); }
  RecomputationScope(const RecomputationScope&) = delete;
  RecomputationScope& operator=(const RecomputationScope&) = delete;

  static bool active() { return depth() > 0; }

 private:
  static int& depth() {
    static thread_local int d = 0;  // nested checkpoints (a block inside a block) stay marked
    return d;
  }
};

}  // namespace tbd
