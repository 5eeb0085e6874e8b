// The interface of a reinforcement-learning environment, as A3C sees it: a
// game that renders 84×84 grayscale frames, takes one of a fixed set of
// discrete actions per frame, and returns a reward and whether the episode
// ended. Implement it to plug in another simulator (an emulator, a physics
// engine): the frame-skip and frame-stack wrapper (frame_stack.h) and the
// A3C learner (src/tbd/rl) work with any Environment.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tbd::envs {

constexpr int kFrameSize = 84;  // frames are kFrameSize × kFrameSize pixels

// One grayscale screen, row-major (row y, column x at y·84 + x), 0 (black)
// to 255 (white). The learner scales it to [0, 1].
using Frame = std::array<uint8_t, kFrameSize * kFrameSize>;

struct Transition {
  Frame frame;        // the screen after the step
  double reward = 0;  // the game's own score change (not clipped)
  bool done = false;  // the episode ended with this step
};

class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::string name() const = 0;
  virtual int action_count() const = 0;  // actions are 0 .. action_count() - 1
  // Starts a new episode; the same seed gives the same episode for the same actions.
  virtual Frame reset(uint64_t seed) = 0;
  // Advances one frame (one emulator frame; frame skip is the wrapper's job).
  // Stepping after `done` without a reset is an error.
  virtual Transition step(int action) = 0;
};

}  // namespace tbd::envs
