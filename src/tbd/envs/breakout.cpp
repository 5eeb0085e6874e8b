#include "tbd/envs/breakout.h"

#include <algorithm>
#include <cmath>

#include "tbd/core/error.h"
#include "tbd/envs/canvas.h"

namespace tbd::envs {
namespace {

// Geometry in pixels of the 84×84 screen.
constexpr double kLeft = 2, kRight = 82, kTop = 12;  // inner edges of the walls
constexpr double kBrickTop = 20, kBrickWidth = 5, kBrickHeight = 3;
constexpr double kPaddleY = 76, kPaddleWidth = 12, kPaddleHeight = 2, kPaddleSpeed = 3;
constexpr double kBall = 2, kSlowSpeed = 1.5, kFastSpeed = 2.0, kSpin = 2.0, kMinSideways = 0.5;
constexpr int kRowPoints[Breakout::kRows] = {7, 7, 4, 4, 1, 1};
constexpr uint8_t kRowShade[Breakout::kRows] = {200, 184, 168, 152, 136, 120};

bool overlaps(double a0, double a_len, double b0, double b_len) { return a0 < b0 + b_len && b0 < a0 + a_len; }

}  // namespace

int Breakout::bricks_left() const {
  int n = 0;
  for (const auto& row : bricks_) n += static_cast<int>(std::count(row.begin(), row.end(), true));
  return n;
}

Frame Breakout::reset(uint64_t seed) {
  rng_ = GameRng(seed);
  for (auto& row : bricks_) row.fill(true);
  paddle_x_ = std::floor(rng_.uniform(kLeft, kRight - kPaddleWidth));
  in_play_ = false;
  lives_ = kLives;
  score_ = 0;
  frames_ = 0;
  done_ = false;
  return render();
}

bool Breakout::hit_brick(double& reward) {
  const int row0 = static_cast<int>(std::floor((ball_y_ - kBrickTop) / kBrickHeight));
  const int col0 = static_cast<int>(std::floor((ball_x_ - kLeft) / kBrickWidth));
  // The 2×2 ball touches at most the 2×2 bricks from (row0, col0).
  for (int row = std::max(0, row0); row <= std::min(kRows - 1, row0 + 1); ++row)
    for (int col = std::max(0, col0); col <= std::min(kColumns - 1, col0 + 1); ++col) {
      if (!bricks_[row][col]) continue;
      if (!overlaps(ball_x_, kBall, kLeft + col * kBrickWidth, kBrickWidth) ||
          !overlaps(ball_y_, kBall, kBrickTop + row * kBrickHeight, kBrickHeight))
        continue;
      bricks_[row][col] = false;
      reward += kRowPoints[row];
      score_ += kRowPoints[row];
      if (row < 2) ball_vy_ = std::copysign(kFastSpeed, ball_vy_);  // the top rows speed the ball up
      return true;
    }
  return false;
}

double Breakout::move_ball() {
  double reward = 0;
  // Sub-steps of at most one pixel: the ball never passes through a brick.
  const int substeps = static_cast<int>(std::ceil(std::max(std::abs(ball_vx_), std::abs(ball_vy_))));
  for (int i = 0; i < substeps && in_play_; ++i) {
    const double dx = ball_vx_ / substeps, dy = ball_vy_ / substeps;
    ball_x_ += dx;
    if (ball_x_ < kLeft) ball_x_ = 2 * kLeft - ball_x_, ball_vx_ = -ball_vx_;
    if (ball_x_ + kBall > kRight) ball_x_ = 2 * (kRight - kBall) - ball_x_, ball_vx_ = -ball_vx_;
    if (hit_brick(reward)) ball_x_ -= dx, ball_vx_ = -ball_vx_;
    ball_y_ += dy;
    if (ball_y_ < kTop) ball_y_ = 2 * kTop - ball_y_, ball_vy_ = -ball_vy_;
    if (hit_brick(reward)) ball_y_ -= dy, ball_vy_ = -ball_vy_;
    if (ball_vy_ > 0 && overlaps(ball_y_, kBall, kPaddleY, kPaddleHeight) &&
        overlaps(ball_x_, kBall, paddle_x_, kPaddleWidth)) {
      // Off-centre hits leave at an angle, as on the Atari.
      const double offset = ((ball_x_ + kBall / 2) - (paddle_x_ + kPaddleWidth / 2)) / (kPaddleWidth / 2 + 1);
      ball_y_ = kPaddleY - kBall;
      ball_vy_ = -std::abs(ball_vy_);
      // Never straight up: a vertical ball could bounce in one column for ever.
      const double vx = kSpin * std::clamp(offset, -1.0, 1.0);
      ball_vx_ = std::abs(vx) >= kMinSideways ? vx : std::copysign(kMinSideways, vx == 0 ? ball_vx_ : vx);
    }
    if (ball_y_ >= kFrameSize) {  // lost below the paddle
      in_play_ = false;
      --lives_;
    }
  }
  if (bricks_left() == 0)
    for (auto& row : bricks_) row.fill(true);
  return reward;
}

Transition Breakout::step(int action) {
  if (done_) throw Error("breakout: step() after the episode ended; call reset() first");
  if (action < 0 || action >= action_count())
    throw Error("breakout: action " + std::to_string(action) + " is not in 0.." + std::to_string(action_count() - 1));
  ++frames_;
  if (action == 2) paddle_x_ = std::min(kRight - kPaddleWidth, paddle_x_ + kPaddleSpeed);
  if (action == 3) paddle_x_ = std::max(kLeft, paddle_x_ - kPaddleSpeed);
  if (action == 1 && !in_play_) {  // FIRE launches a ball from below the wall, downwards
    in_play_ = true;
    ball_x_ = rng_.uniform(kLeft + 8, kRight - 8);
    ball_y_ = kBrickTop + kRows * kBrickHeight + 6;
    ball_vx_ = rng_.coin() ? 1.0 : -1.0;
    ball_vy_ = kSlowSpeed;
  }
  Transition t;
  if (in_play_) t.reward = move_ball();
  done_ = lives_ == 0 || frames_ >= max_frames_;
  t.done = done_;
  t.frame = render();
  return t;
}

Frame Breakout::render() const {
  Frame frame;
  Canvas c(frame);
  c.clear(0);
  c.draw_number(4, 2, score_, 1, 180);
  c.draw_number(72, 2, lives_, 1, 180);
  c.fill_rect(0, static_cast<int>(kTop) - 2, kFrameSize, 2, 142);  // top wall
  c.fill_rect(0, static_cast<int>(kTop) - 2, static_cast<int>(kLeft), kFrameSize, 142);
  c.fill_rect(static_cast<int>(kRight), static_cast<int>(kTop) - 2, kFrameSize - static_cast<int>(kRight), kFrameSize,
              142);
  for (int row = 0; row < kRows; ++row)
    for (int col = 0; col < kColumns; ++col)
      if (bricks_[row][col])
        c.fill_rect(static_cast<int>(kLeft + col * kBrickWidth), static_cast<int>(kBrickTop + row * kBrickHeight),
                    static_cast<int>(kBrickWidth), static_cast<int>(kBrickHeight), kRowShade[row]);
  c.fill_rect(static_cast<int>(std::lround(paddle_x_)), static_cast<int>(kPaddleY), static_cast<int>(kPaddleWidth),
              static_cast<int>(kPaddleHeight), 200);
  if (in_play_)
    c.fill_rect(static_cast<int>(std::lround(ball_x_)), static_cast<int>(std::lround(ball_y_)), static_cast<int>(kBall),
                static_cast<int>(kBall), 236);
  return frame;
}

}  // namespace tbd::envs
