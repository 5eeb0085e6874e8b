#include "tbd/envs/frame_stack.h"

#include <algorithm>

#include "tbd/core/error.h"

namespace tbd::envs {

FrameStack::FrameStack(std::unique_ptr<Environment> env, int skip, int stack)
    : env_(std::move(env)), skip_(skip), stack_(stack), frames_(static_cast<size_t>(std::max(stack, 1))) {
  if (!env_) throw Error("FrameStack needs an environment");
  if (skip_ < 1 || stack_ < 1)
    throw Error("frame skip and frame stack must be at least 1, got skip " + std::to_string(skip_) + " and stack " +
                std::to_string(stack_));
}

void FrameStack::reset(uint64_t seed) {
  const Frame first = env_->reset(seed);
  for (auto& f : frames_) f = first;
  newest_ = stack_ - 1;
}

void FrameStack::push(const Frame& frame) {
  newest_ = (newest_ + 1) % stack_;
  frames_[newest_] = frame;
}

AgentStep FrameStack::step(int action) {
  AgentStep s;
  Frame previous{}, last{};
  for (int i = 0; i < skip_ && !s.done; ++i) {
    Transition t = env_->step(action);
    previous = last;
    last = t.frame;
    s.reward += t.reward;
    s.done = t.done;
    ++s.frames;
  }
  if (s.frames >= 2)
    for (size_t p = 0; p < last.size(); ++p) last[p] = std::max(last[p], previous[p]);
  push(last);
  return s;
}

void FrameStack::observation(float* out) const {
  constexpr size_t kPixels = kFrameSize * kFrameSize;
  for (int i = 0; i < stack_; ++i) {
    const Frame& f = frames_[(newest_ + 1 + i) % stack_];  // oldest first
    for (size_t p = 0; p < kPixels; ++p) out[i * kPixels + p] = static_cast<float>(f[p]) * (1.0f / 255.0f);
  }
}

}  // namespace tbd::envs
