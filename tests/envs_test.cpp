// The built-in games and the Atari preprocessing wrapper: determinism for a
// seed, frame contents, rewards when they should happen, episode ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tbd/core/error.h"
#include "tbd/envs/breakout.h"
#include "tbd/envs/frame_stack.h"
#include "tbd/envs/games.h"
#include "tbd/envs/pong.h"
#include "test_util.h"

namespace tbd::envs {
namespace {

// A fixed, varied action sequence.
int scripted_action(int t, int actions) { return (t * 7 + t / 5) % actions; }

struct Played {
  std::vector<Frame> frames;
  std::vector<double> rewards;
};

Played play(Environment& env, uint64_t seed, int steps) {
  Played p;
  p.frames.push_back(env.reset(seed));
  for (int t = 0; t < steps; ++t) {
    const Transition tr = env.step(scripted_action(t, env.action_count()));
    p.frames.push_back(tr.frame);
    p.rewards.push_back(tr.reward);
    if (tr.done) break;
  }
  return p;
}

TEST(Envs, SameSeedSameActionsSameEpisode) {
  for (const auto& name : game_names()) {
    auto a = make_game(name), b = make_game(name), c = make_game(name);
    const Played pa = play(*a, 7, 600), pb = play(*b, 7, 600), pc = play(*c, 8, 600);
    EXPECT_EQ(pa.frames, pb.frames) << name;
    EXPECT_EQ(pa.rewards, pb.rewards) << name;
    EXPECT_NE(pa.frames, pc.frames) << name << ": another seed should give another episode";
  }
}

TEST(Envs, FramesShowTheGame) {
  Pong pong;
  Frame f = pong.reset(1);
  for (int t = 0; t < 30 && !pong.ball_in_play(); ++t) f = pong.step(0).frame;
  ASSERT_TRUE(pong.ball_in_play());
  // Background, walls, two paddles and the ball are distinct grey levels.
  EXPECT_EQ(std::count(f.begin(), f.end(), 236), 4) << "the 2x2 ball";
  EXPECT_EQ(std::count(f.begin(), f.end(), 150), 16) << "the agent's 2x8 paddle";
  EXPECT_GT(std::count(f.begin(), f.end(), 60), 84 * 60) << "mostly background";

  Breakout breakout;
  const Frame b = breakout.reset(1);
  EXPECT_EQ(breakout.bricks_left(), Breakout::kRows * Breakout::kColumns);
  EXPECT_EQ(std::count(b.begin(), b.end(), 120), 16 * 5 * 3) << "the bottom row of bricks";
  EXPECT_EQ(std::count(b.begin(), b.end(), 236), 0) << "no ball before FIRE";
}

// Moves the paddle so the ball meets it off-centre (which returns it at an angle).
int pong_tracker(const Pong& p) {
  if (!p.ball_in_play()) return 0;
  const double aim = p.ball_y() + 1 - 4 + 3;  // paddle top so the ball hits 3 px above centre
  if (p.paddle_y() > aim + 1) return 2;       // up
  if (p.paddle_y() < aim - 1) return 3;       // down
  return 0;
}

TEST(Envs, PongTrackingPlayerWinsAndIdlePlayerLoses) {
  Pong pong;
  pong.reset(3);
  double tracked = 0;
  int64_t frames = 0;
  for (bool done = false; !done; ++frames) {
    const Transition t = pong.step(pong_tracker(pong));
    EXPECT_TRUE(t.reward == 0 || t.reward == 1 || t.reward == -1);
    tracked += t.reward;
    done = t.done;
  }
  EXPECT_EQ(pong.agent_score(), 21) << "the episode ends at 21 points";
  EXPECT_LT(frames, 100000) << "ended by the score, not the frame cap";
  EXPECT_EQ(tracked, 21 - pong.opponent_score());
  EXPECT_GT(tracked, 0);

  pong.reset(3);
  double idle = 0;
  for (bool done = false; !done;) {
    const Transition t = pong.step(0);
    idle += t.reward;
    done = t.done;
  }
  EXPECT_EQ(pong.opponent_score(), 21);
  EXPECT_LT(idle, 0);
}

TEST(Envs, BreakoutPaysPerBrickAndEndsWithTheLastLife) {
  Breakout game;
  game.reset(5);
  double total = 0;
  for (int t = 0; t < 3000; ++t) {
    int action = 1;  // FIRE when no ball is in play
    if (game.ball_in_play()) {
      const double target = game.ball_x() + 1 - 6;
      action = game.paddle_x() < target - 1 ? 2 : game.paddle_x() > target + 1 ? 3 : 0;
    }
    const int before = game.bricks_left();
    const Transition tr = game.step(action);
    const int broken = before - game.bricks_left();
    if (tr.reward > 0) {
      // Each brick is worth 1, 4 or 7 points.
      EXPECT_GE(broken, 1);
      EXPECT_GE(tr.reward, broken);
      EXPECT_LE(tr.reward, 7 * broken);
    } else {
      EXPECT_EQ(broken, 0) << "a brick broke without reward";
    }
    total += tr.reward;
    if (tr.done) break;
  }
  EXPECT_GT(total, 10) << "a player that follows the ball breaks bricks";

  // Firing and never moving loses every ball: the episode ends with lives 0.
  game.reset(5);
  bool done = false;
  int frames = 0;
  while (!done && frames < 20000) done = game.step(1).done, ++frames;
  EXPECT_TRUE(done);
  EXPECT_EQ(game.lives(), 0);

  // Never firing: no reward, no lost life, the frame cap ends it.
  Breakout capped(200);
  capped.reset(5);
  double reward = 0;
  for (int t = 0; t < 199; ++t) {
    const Transition tr = capped.step(0);
    reward += tr.reward;
    ASSERT_FALSE(tr.done);
  }
  EXPECT_TRUE(capped.step(0).done);
  EXPECT_EQ(reward, 0);
  EXPECT_EQ(capped.lives(), Breakout::kLives);
}

TEST(Envs, SteppingAfterTheEndOrWithABadActionIsAnError) {
  Pong pong(3);
  pong.reset(0);
  pong.step(0);
  pong.step(0);
  EXPECT_TRUE(pong.step(0).done);
  EXPECT_NE(testing::error_of<Error>([&] { pong.step(0); }).find("reset"), std::string::npos);
  pong.reset(0);
  EXPECT_NE(testing::error_of<Error>([&] { pong.step(6); }).find("action 6"), std::string::npos);
  const std::string msg = testing::error_of<UsageError>([] { make_game("doom"); });
  EXPECT_NE(msg.find("doom"), std::string::npos);
  EXPECT_NE(msg.find("breakout"), std::string::npos);
}

// Frame t is filled with the value 10·t (then 0 again after 25); ends at `length`.
class CountingEnv final : public Environment {
 public:
  explicit CountingEnv(int length) : length_(length) {}
  std::string name() const override { return "counting"; }
  int action_count() const override { return 2; }
  Frame reset(uint64_t) override {
    t_ = 0;
    return frame();
  }
  Transition step(int) override {
    ++t_;
    return {frame(), 1.0, t_ >= length_};
  }

 private:
  Frame frame() const {
    Frame f;
    f.fill(static_cast<uint8_t>((10 * t_) % 250));
    f[0] = static_cast<uint8_t>(t_ % 2 ? 200 : 0);  // a flickering pixel
    return f;
  }
  int t_ = 0, length_;
};

TEST(Envs, FrameStackSkipsMaxPoolsAndStacks) {
  FrameStack env(std::make_unique<CountingEnv>(10), 4, 4);
  env.reset(0);
  std::vector<float> obs(4 * 84 * 84);
  env.observation(obs.data());
  EXPECT_EQ(obs[100], 0.0f);
  EXPECT_EQ(obs[3 * 84 * 84 + 100], 0.0f) << "the stack starts as copies of the first frame";

  AgentStep s = env.step(0);
  EXPECT_EQ(s.frames, 4);
  EXPECT_EQ(s.reward, 4.0) << "rewards summed over the skipped frames";
  EXPECT_FALSE(s.done);
  env.observation(obs.data());
  // Newest = max(frame 3, frame 4) = 40; older slots still hold the first frame.
  EXPECT_FLOAT_EQ(obs[3 * 84 * 84 + 100], 40.0f / 255.0f);
  EXPECT_FLOAT_EQ(obs[3 * 84 * 84], 200.0f / 255.0f) << "the flickering pixel survives the max";
  EXPECT_EQ(obs[2 * 84 * 84 + 100], 0.0f);
  for (float v : obs) ASSERT_TRUE(v >= 0.0f && v <= 1.0f);

  env.step(0);      // frames 5..8
  s = env.step(0);  // frames 9, 10: the episode ends after two frames
  EXPECT_EQ(s.frames, 2);
  EXPECT_TRUE(s.done);
  env.observation(obs.data());
  EXPECT_FLOAT_EQ(obs[3 * 84 * 84 + 100], 100.0f / 255.0f);
  EXPECT_FLOAT_EQ(obs[2 * 84 * 84 + 100], 80.0f / 255.0f) << "oldest first: the previous step's frame";
}

TEST(Envs, GameFramesThroughTheWrapperAreInTheUnitRange) {
  for (const auto& name : game_names()) {
    FrameStack env(make_game(name), 4, 4);
    env.reset(11);
    std::vector<float> obs(4 * 84 * 84);
    for (int t = 0; t < 50; ++t) env.step(scripted_action(t, env.action_count()));
    env.observation(obs.data());
    const auto [lo, hi] = std::minmax_element(obs.begin(), obs.end());
    EXPECT_GE(*lo, 0.0f) << name;
    EXPECT_LE(*hi, 1.0f) << name;
    EXPECT_GT(*hi, *lo) << name << ": not a blank screen";
  }
}

}  // namespace
}  // namespace tbd::envs
