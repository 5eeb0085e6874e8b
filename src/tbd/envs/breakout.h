// A Breakout-like game: a paddle at the bottom, a ball launched with FIRE, a
// wall of 6 × 16 bricks worth 7, 7, 4, 4, 1, 1 points from the top row down
// (as Atari Breakout), 5 lives. Losing the ball costs a life; the episode ends
// with the last life or at a frame cap; a cleared wall is rebuilt.
// Actions follow Atari Breakout's four: NOOP, FIRE, RIGHT, LEFT.
#pragma once

#include <array>

#include "tbd/envs/environment.h"
#include "tbd/envs/game_rng.h"

namespace tbd::envs {

class Breakout final : public Environment {
 public:
  static constexpr int kRows = 6, kColumns = 16, kLives = 5;

  explicit Breakout(int64_t max_frames = 100000) : max_frames_(max_frames) {}
  std::string name() const override { return "breakout"; }
  int action_count() const override { return 4; }
  Frame reset(uint64_t seed) override;
  Transition step(int action) override;

  // Read-only state, for scripted players and tests.
  double ball_x() const { return ball_x_; }      // left edge of the 2×2 ball
  double paddle_x() const { return paddle_x_; }  // left edge of the paddle
  bool ball_in_play() const { return in_play_; }
  int lives() const { return lives_; }
  int bricks_left() const;

 private:
  double move_ball();              // one frame of ball flight; returns the reward
  bool hit_brick(double& reward);  // removes a brick the ball overlaps
  Frame render() const;

  int64_t max_frames_;
  GameRng rng_;
  std::array<std::array<bool, kColumns>, kRows> bricks_{};
  double ball_x_ = 0, ball_y_ = 0, ball_vx_ = 0, ball_vy_ = 0, paddle_x_ = 0;
  bool in_play_ = false;
  int lives_ = kLives, score_ = 0;
  int64_t frames_ = 0;
  bool done_ = true;
};

}  // namespace tbd::envs
