// A3C: the Atari network's size, the actor-critic loss and shared RMSprop,
// the asynchronous workers, and learning on a game with an obvious policy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "tbd/core/error.h"
#include "tbd/envs/canvas.h"
#include "tbd/envs/game_rng.h"
#include "tbd/envs/games.h"
#include "tbd/measure/runner.h"
#include "tbd/nn/atari_net.h"
#include "tbd/rl/a3c_trainer.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {

TEST(A3C, NetworkParametersMatchTheLayerShapes) {
  for (const auto& game : envs::game_names()) {
    const int64_t actions = envs::make_game(game)->action_count();
    nn::AtariNetConfig c;
    c.actions = actions;
    // conv 4->16 8x8, conv 16->32 4x4, fc 32·9·9->256, policy 256->A, value 256->1.
    const int64_t expected =
        (4 * 16 * 64 + 16) + (16 * 32 * 16 + 32) + (32 * 9 * 9 * 256 + 256) + (256 * actions + actions) + (256 + 1);
    EXPECT_EQ(count_parameters(*nn::AtariNet(c)), expected) << game;
    EXPECT_EQ(nn::atari_net_parameters(c), expected) << game;
    testing::WorkloadUnderTest w("a3c", Scale::tiny, {{"game", game}}, 1);
    EXPECT_EQ(w.workload->full_scale_parameters(Settings(w.workload->info().settings, {{"game", game}}, "a3c")),
              expected);
  }
  EXPECT_EQ(envs::make_game("pong")->action_count(), 6);
  EXPECT_EQ(envs::make_game("breakout")->action_count(), 4);
}

TEST(A3C, NetworkGivesAPolicyAndAValuePerObservation) {
  nn::AtariNetConfig c;
  c.actions = 4;
  nn::AtariNet net(c);
  const auto out = net->forward(torch::rand({3, 4, 84, 84}));
  EXPECT_EQ(out.logits.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(out.value.sizes(), (std::vector<int64_t>{3}));
}

TEST(A3C, SharedRMSpropFollowsThePapersUpdate) {
  auto p = torch::tensor({1.0f, -2.0f});
  rl::SharedRMSprop opt({p}, {0.1, 0.9, 0.1});
  const auto g = torch::tensor({0.5f, 2.0f});
  opt.step({g});
  // g_avg = 0.1·g²; θ ← θ − lr·g / √(g_avg + ε)
  const auto expected = torch::tensor({1.0f, -2.0f}) - 0.1 * g / (0.1 * g * g + 0.1).sqrt();
  EXPECT_TRUE(torch::allclose(p, expected));
  EXPECT_TRUE(torch::allclose(opt.square_averages()[0], 0.1 * g * g));
}

// A rollout of 20 agent steps of Pong under random actions, with rewards set
// so that the returns are clearly positive.
rl::Rollout fixed_rollout(int steps) {
  envs::FrameStack env(envs::make_game("pong"), 4, 4);
  env.reset(9);
  rl::Rollout r;
  r.observations = torch::zeros({steps + 1, 4, 84, 84});
  r.actions = torch::zeros({steps}, torch::kInt64);
  r.rewards = torch::zeros({steps});
  r.dones = torch::zeros({steps});
  env.observation(r.observations[0].data_ptr<float>());
  for (int t = 0; t < steps; ++t) {
    const int a = (t * 5) % 6;
    env.step(a);
    env.observation(r.observations[t + 1].data_ptr<float>());
    r.actions[t] = a;
    r.rewards[t] = t % 4 == 3 ? 1.0f : 0.0f;
  }
  return r;
}

TEST(A3C, LossOnAFixedRolloutFalls) {
  torch::manual_seed(1);
  nn::AtariNetConfig c;
  c.conv1 = 4, c.conv2 = 8, c.hidden = 32;
  nn::AtariNet net(c);
  rl::SharedRMSprop opt(net->parameters(), {});
  const rl::Rollout rollout = fixed_rollout(20);
  rl::A3CConfig config;
  std::vector<double> losses;
  for (int i = 0; i < 40; ++i) {
    net->zero_grad(true);
    const auto loss = rl::a3c_loss(net, rollout, config);
    ASSERT_TRUE(std::isfinite(loss.total.item<double>()));
    losses.push_back(loss.total.item<double>());
    loss.total.backward();
    std::vector<torch::Tensor> grads;
    for (const auto& p : net->parameters()) grads.push_back(p.grad());
    opt.step(grads);
  }
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << "first " << losses.front() << ", last " << losses.back();
}

TEST(A3C, TinyStepRunsAllWorkersWithAFiniteLoss) {
  testing::WorkloadUnderTest w("a3c", Scale::tiny, {}, 3);
  const Batch b = w.workload->next_batch();
  EXPECT_EQ(b.samples, 3 * 5 * 4) << "workers × t_max (5 at tiny scale) × frame skip";
  const auto before = w.workload->state().weights[0].clone();
  w.workload->begin_measurement();
  EXPECT_TRUE(std::isfinite(w.step(b)));
  EXPECT_TRUE(std::isfinite(w.step(b)));
  EXPECT_FALSE(torch::equal(before, w.workload->state().weights[0])) << "the shared weights were updated";
  const auto m = w.workload->measurement();
  EXPECT_EQ(m["env"]["agent_steps"].get<int64_t>(), 2 * 3 * 5);
  EXPECT_EQ(m["env"]["frames"].get<int64_t>(), 2 * b.samples);
  EXPECT_GT(m["env"]["seconds"].get<double>(), 0);
  EXPECT_LT(m["env"]["seconds"].get<double>(), m["workers"]["busy_seconds"].get<double>());
  EXPECT_EQ(w.workload->configuration()["workers"], 3);
  EXPECT_EQ(w.workload->state().optimizer_state.size(), w.workload->state().weights.size());
}

TEST(A3C, TMaxSettingAndRefusals) {
  testing::WorkloadUnderTest w("a3c", Scale::tiny, {{"t_max", "7"}, {"game", "breakout"}}, 2);
  EXPECT_EQ(w.workload->next_batch().samples, 2 * 7 * 4);
  EXPECT_EQ(w.workload->configuration()["actions"], 4);

  const std::string dp =
      testing::error_of<UsageError>([] { check_data_parallel_supported(create_workload("a3c")->info(), 2); });
  EXPECT_NE(dp.find("asynchronously"), std::string::npos) << dp;
  EXPECT_NE(dp.find("--batch-size"), std::string::npos) << dp;
  EXPECT_NO_THROW(check_data_parallel_supported(create_workload("a3c")->info(), 1));
  EXPECT_NO_THROW(check_data_parallel_supported(create_workload("resnet50")->info(), 2));
}

// A game with an obvious best policy, through the same interface and
// wrapper as the Atari-like games: a block appears on the left or the right
// half of the screen; action 0 (left) or 1 (right) earns +1 when it names
// that side, −1 otherwise; a new side is drawn every frame; 10 frames an episode.
class TargetSide final : public envs::Environment {
 public:
  std::string name() const override { return "target-side"; }
  int action_count() const override { return 2; }
  envs::Frame reset(uint64_t seed) override {
    rng_ = envs::GameRng(seed);
    t_ = 0;
    right_ = rng_.coin();
    return render();
  }
  envs::Transition step(int action) override {
    const double reward = (action == 1) == right_ ? 1.0 : -1.0;
    right_ = rng_.coin();
    return {render(), reward, ++t_ >= 10};
  }

 private:
  envs::Frame render() const {
    envs::Frame f;
    envs::Canvas c(f);
    c.clear(0);
    c.fill_rect(right_ ? 54 : 10, 32, 20, 20, 255);
    return f;
  }
  envs::GameRng rng_;
  bool right_ = false;
  int t_ = 0;
};

TEST(A3C, WorkersLearnAGameWithAnObviousPolicy) {
  rl::A3CTrainerConfig c;
  c.workers = 2;
  c.frame_skip = 1;  // one decision per frame: the target changes every frame
  c.net.actions = 2;
  c.net.conv1 = 4, c.net.conv2 = 8, c.net.hidden = 32;  // the tiny scale's widths
  c.a3c.t_max = 5;
  c.seed = 3;
  torch::manual_seed(3);
  rl::A3CTrainer trainer(c, [](int) { return std::make_unique<TargetSide>(); });
  std::vector<double> returns;
  for (int i = 0; i < 200; ++i) {
    trainer.iterate();
    const auto r = trainer.take_episode_returns();
    returns.insert(returns.end(), r.begin(), r.end());
  }
  ASSERT_EQ(returns.size(), 200u) << "2 workers × 5 steps per iteration: one 10-frame episode";
  const auto mean = [](auto begin, auto end) { return std::accumulate(begin, end, 0.0) / std::distance(begin, end); };
  const double first = mean(returns.begin(), returns.begin() + 50);
  const double last = mean(returns.end() - 50, returns.end());
  std::printf("[ a3c      ] mean return of the first 50 episodes %.2f, of the last 50 %.2f\n", first, last);
  // Random play averages 0 (of −10..10); the best policy earns 10.
  EXPECT_GT(last, first + 3) << "first 50 episodes " << first << ", last 50 " << last;
  EXPECT_GT(last, 5);
}

}  // namespace
}  // namespace tbd
