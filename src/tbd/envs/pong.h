// A Pong-like game: the agent's paddle (right) against a scripted opponent
// (left), a ball that bounces off the walls and leaves a paddle at an angle
// that depends on where it hit. +1 when the opponent misses, -1 when the agent
// misses; the episode ends when one side has 21 points or at a frame cap.
// Actions follow Atari Pong's six: NOOP, FIRE, RIGHT (up), LEFT (down),
// RIGHTFIRE (up), LEFTFIRE (down).
#pragma once

#include "tbd/envs/environment.h"
#include "tbd/envs/game_rng.h"

namespace tbd::envs {

class Pong final : public Environment {
 public:
  explicit Pong(int64_t max_frames = 100000) : max_frames_(max_frames) {}
  std::string name() const override { return "pong"; }
  int action_count() const override { return 6; }
  Frame reset(uint64_t seed) override;
  Transition step(int action) override;

  // Read-only state, for scripted players and tests.
  double ball_y() const { return ball_y_; }     // top edge of the 2×2 ball
  double paddle_y() const { return agent_y_; }  // top edge of the agent's paddle
  bool ball_in_play() const { return serve_wait_ == 0; }
  int agent_score() const { return agent_score_; }
  int opponent_score() const { return opponent_score_; }

 private:
  void serve(bool toward_agent);
  double move_ball();  // one frame of ball flight; returns the reward
  Frame render() const;

  int64_t max_frames_;
  GameRng rng_;
  double ball_x_ = 0, ball_y_ = 0, ball_vx_ = 0, ball_vy_ = 0;
  double agent_y_ = 0, opponent_y_ = 0, opponent_aim_ = 0;
  int serve_wait_ = 0;  // frames until the next serve (the ball is off screen)
  bool next_serve_toward_agent_ = true;
  int agent_score_ = 0, opponent_score_ = 0;
  int64_t frames_ = 0;
  bool done_ = true;
};

}  // namespace tbd::envs
