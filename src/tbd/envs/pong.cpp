#include "tbd/envs/pong.h"

#include <algorithm>
#include <cmath>

#include "tbd/core/error.h"
#include "tbd/envs/canvas.h"

namespace tbd::envs {
namespace {

// Court geometry in pixels of the 84×84 screen.
constexpr double kCourtTop = 12, kCourtBottom = 80;  // walls above and below
constexpr double kOpponentX = 6, kAgentX = 76;       // left edges of the paddles
constexpr double kPaddleWidth = 2, kPaddleHeight = 8, kBall = 2;
constexpr double kAgentSpeed = 2.5, kOpponentSpeed = 1.4;  // px per frame
constexpr double kServeSpeed = 1.6, kMaxSpeed = 3.0, kSpin = 2.0;
constexpr int kServeDelay = 20;  // frames between a point and the next serve
constexpr int kWinningScore = 21;

double clamp_paddle(double y) { return std::clamp(y, kCourtTop, kCourtBottom - kPaddleHeight); }

// The ball leaves a paddle faster and at an angle set by where it hit:
// the centre sends it straight, the edges steeply.
void bounce(double paddle_y, double ball_y, double& vx, double& vy) {
  const double offset = ((ball_y + kBall / 2) - (paddle_y + kPaddleHeight / 2)) / (kPaddleHeight / 2 + 1);
  vx = -std::copysign(std::min(kMaxSpeed, std::abs(vx) * 1.05), vx);
  vy = kSpin * std::clamp(offset, -1.0, 1.0);
}

bool overlaps(double a0, double a_len, double b0, double b_len) { return a0 < b0 + b_len && b0 < a0 + a_len; }

}  // namespace

Frame Pong::reset(uint64_t seed) {
  rng_ = GameRng(seed);
  agent_y_ = opponent_y_ = clamp_paddle((kCourtTop + kCourtBottom - kPaddleHeight) / 2);
  agent_score_ = opponent_score_ = 0;
  frames_ = 0;
  done_ = false;
  serve_wait_ = kServeDelay;
  next_serve_toward_agent_ = rng_.coin();
  opponent_aim_ = 0;
  return render();
}

void Pong::serve(bool toward_agent) {
  ball_x_ = 41;
  ball_y_ = rng_.uniform(kCourtTop + 10, kCourtBottom - 10);
  ball_vx_ = toward_agent ? kServeSpeed : -kServeSpeed;
  ball_vy_ = rng_.uniform(-1.2, 1.2);
}

double Pong::move_ball() {
  // Sub-steps of at most one pixel, so the ball never passes through a paddle.
  const int substeps = static_cast<int>(std::ceil(std::max(std::abs(ball_vx_), std::abs(ball_vy_))));
  for (int i = 0; i < substeps; ++i) {
    ball_y_ += ball_vy_ / substeps;
    if (ball_y_ < kCourtTop) ball_y_ = 2 * kCourtTop - ball_y_, ball_vy_ = -ball_vy_;
    if (ball_y_ + kBall > kCourtBottom) ball_y_ = 2 * (kCourtBottom - kBall) - ball_y_, ball_vy_ = -ball_vy_;
    ball_x_ += ball_vx_ / substeps;
    if (ball_vx_ > 0 && overlaps(ball_x_, kBall, kAgentX, kPaddleWidth) &&
        overlaps(ball_y_, kBall, agent_y_, kPaddleHeight)) {
      ball_x_ = kAgentX - kBall;
      bounce(agent_y_, ball_y_, ball_vx_, ball_vy_);
      opponent_aim_ = rng_.uniform(-5, 5);  // the opponent misjudges each return a little
    } else if (ball_vx_ < 0 && overlaps(ball_x_, kBall, kOpponentX, kPaddleWidth) &&
               overlaps(ball_y_, kBall, opponent_y_, kPaddleHeight)) {
      ball_x_ = kOpponentX + kPaddleWidth;
      bounce(opponent_y_, ball_y_, ball_vx_, ball_vy_);
    }
    if (ball_x_ + kBall < 0 || ball_x_ > kFrameSize) {
      const bool agent_scored = ball_x_ + kBall < 0;
      (agent_scored ? agent_score_ : opponent_score_) += 1;
      serve_wait_ = kServeDelay;
      next_serve_toward_agent_ = !agent_scored;  // served towards the side that lost the point
      return agent_scored ? 1.0 : -1.0;
    }
  }
  return 0.0;
}

Transition Pong::step(int action) {
  if (done_) throw Error("pong: step() after the episode ended; call reset() first");
  if (action < 0 || action >= action_count())
    throw Error("pong: action " + std::to_string(action) + " is not in 0.." + std::to_string(action_count() - 1));
  ++frames_;
  // RIGHT and RIGHTFIRE move the paddle up, LEFT and LEFTFIRE down (as Atari Pong).
  if (action == 2 || action == 4) agent_y_ = clamp_paddle(agent_y_ - kAgentSpeed);
  if (action == 3 || action == 5) agent_y_ = clamp_paddle(agent_y_ + kAgentSpeed);

  // The opponent follows the ball while it comes towards it, else recentres.
  const double target = serve_wait_ == 0 && ball_vx_ < 0 ? ball_y_ + kBall / 2 - kPaddleHeight / 2 + opponent_aim_
                                                         : (kCourtTop + kCourtBottom - kPaddleHeight) / 2;
  opponent_y_ = clamp_paddle(opponent_y_ + std::clamp(target - opponent_y_, -kOpponentSpeed, kOpponentSpeed));

  Transition t;
  if (serve_wait_ > 0) {
    if (--serve_wait_ == 0) serve(next_serve_toward_agent_);
  } else {
    t.reward = move_ball();
  }
  done_ = agent_score_ >= kWinningScore || opponent_score_ >= kWinningScore || frames_ >= max_frames_;
  t.done = done_;
  t.frame = render();
  return t;
}

Frame Pong::render() const {
  Frame frame;
  Canvas c(frame);
  c.clear(60);
  c.draw_number(16, 1, opponent_score_, 1, 140);
  c.draw_number(60, 1, agent_score_, 1, 200);
  c.fill_rect(0, static_cast<int>(kCourtTop) - 2, kFrameSize, 2, 180);
  c.fill_rect(0, static_cast<int>(kCourtBottom), kFrameSize, 2, 180);
  c.fill_rect(static_cast<int>(kOpponentX), static_cast<int>(std::lround(opponent_y_)), static_cast<int>(kPaddleWidth),
              static_cast<int>(kPaddleHeight), 110);
  c.fill_rect(static_cast<int>(kAgentX), static_cast<int>(std::lround(agent_y_)), static_cast<int>(kPaddleWidth),
              static_cast<int>(kPaddleHeight), 150);
  if (serve_wait_ == 0)
    c.fill_rect(static_cast<int>(std::lround(ball_x_)), static_cast<int>(std::lround(ball_y_)), static_cast<int>(kBall),
                static_cast<int>(kBall), 236);
  return frame;
}

}  // namespace tbd::envs
