// The usual Atari preprocessing around any Environment (as DQN and A3C use
// it): each agent step repeats the action for `skip` frames, summing the
// rewards, and keeps the pixel-wise maximum of the last two frames (sprites
// that flicker between frames stay visible); the observation is the last
// `stack` such frames, so the agent can see motion.
#pragma once

#include <memory>
#include <vector>

#include "tbd/envs/environment.h"

namespace tbd::envs {

struct AgentStep {
  double reward = 0;  // summed over the skipped frames, not clipped
  bool done = false;
  int frames = 0;  // emulator frames this step ran (skip, fewer when the episode ended)
};

class FrameStack {
 public:
  explicit FrameStack(std::unique_ptr<Environment> env, int skip = 4, int stack = 4);

  Environment& environment() { return *env_; }
  int action_count() const { return env_->action_count(); }
  int skip() const { return skip_; }
  int stack() const { return stack_; }

  void reset(uint64_t seed);  // a new episode; the stack starts as copies of its first frame
  AgentStep step(int action);
  // Writes stack × 84 × 84 floats in [0, 1] (pixel / 255), oldest frame first.
  void observation(float* out) const;
  const Frame& newest() const { return frames_[newest_]; }

 private:
  void push(const Frame& frame);

  std::unique_ptr<Environment> env_;
  int skip_, stack_;
  std::vector<Frame> frames_;  // a ring of the last `stack` observed frames
  int newest_ = 0;
};

}  // namespace tbd::envs
