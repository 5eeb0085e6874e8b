// One A3C actor-learner (Mnih et al. 2016, algorithm S3): it copies the
// shared parameters into its own network, plays t_max agent steps in its own
// environment, computes n-step returns and the actor-critic loss, and applies
// its gradients to the shared parameters through the shared RMSprop.
//
// Rollouts are always t_max steps long: when an episode ends inside one, the
// environment is reset and the rollout goes on in the next episode, with the
// return cut at the boundary (R = r_t for the last step of an episode). The
// gradient is the paper's; a rollout may just span two episodes, and every
// iteration plays the same number of frames.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "tbd/envs/frame_stack.h"
#include "tbd/envs/game_rng.h"
#include "tbd/nn/atari_net.h"
#include "tbd/rl/shared_rmsprop.h"

namespace tbd::rl {

struct A3CConfig {
  int t_max = 20;             // agent steps per rollout (the n of the n-step return)
  double gamma = 0.99;        // discount
  double entropy = 0.01;      // weight β of the entropy bonus
  double value_coef = 0.5;    // weight of the squared value error
  double max_grad_norm = 40;  // the worker's gradient is clipped to this global norm
  bool clip_rewards = true;   // learn from rewards clipped to [-1, 1], as on Atari
};

// What one worker played in one rollout.
struct Rollout {
  torch::Tensor observations;  // [t_max + 1, stack, 84, 84] float: s_0 .. s_t_max (the last bootstraps)
  torch::Tensor actions;       // [t_max] int64
  torch::Tensor rewards;       // [t_max] float, as learned from (clipped when configured)
  torch::Tensor dones;         // [t_max] float: 1 where the episode ended with that step
};

struct A3CLoss {
  torch::Tensor total;                   // policy + value_coef · value (the quantity differentiated)
  torch::Tensor policy, value, entropy;  // detached parts: −Σ log π·A, Σ (R − V)², Σ H
};

// The actor-critic loss of a rollout under `model`, summed over its steps:
// −Σ log π(a_t|s_t)·(R_t − V(s_t)) − β Σ H(π(·|s_t)) + value_coef Σ (R_t − V(s_t))²,
// with R_t the n-step return bootstrapped from V(s_t_max) (no gradient through it).
A3CLoss a3c_loss(nn::AtariNet& model, const Rollout& rollout, const A3CConfig& config);

// Accumulated by a worker; read by the trainer between iterations.
struct WorkerCounters {
  double env_s = 0;         // thread-seconds inside the environment (reset and step)
  double busy_s = 0;        // thread-seconds of whole rollouts-and-updates
  int64_t agent_steps = 0;  // steps of the agent
  int64_t frames = 0;       // emulator frames: agent steps × frame skip
  int64_t episodes = 0;
};

class A3CWorker {
 public:
  A3CWorker(int id, std::unique_ptr<envs::FrameStack> env, nn::AtariNetConfig net, A3CConfig config, uint64_t seed,
            torch::Device device);

  // Sync from `shared`, play one rollout, update `shared` with `optimizer`.
  // Returns the rollout's loss (before the update).
  double rollout_and_update(nn::AtariNet& shared, SharedRMSprop& optimizer);

  const Rollout& last_rollout() const { return rollout_; }
  const WorkerCounters& counters() const { return counters_; }
  // Returns (unclipped) of the episodes finished since the last call.
  std::vector<double> take_episode_returns();

 private:
  void play_rollout();
  void new_episode();

  int id_;
  std::unique_ptr<envs::FrameStack> env_;
  nn::AtariNet local_{nullptr};
  A3CConfig config_;
  uint64_t seed_;
  torch::Device device_;
  envs::GameRng rng_;  // action sampling
  Rollout rollout_;
  WorkerCounters counters_;
  double episode_return_ = 0;
  std::vector<double> finished_returns_;
};

}  // namespace tbd::rl
