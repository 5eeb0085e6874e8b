#include "tbd/rl/a3c_worker.h"

#include <ATen/record_function.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "tbd/core/rng.h"

namespace tbd::rl {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

A3CLoss a3c_loss(nn::AtariNet& model, const Rollout& r, const A3CConfig& c) {
  const int64_t steps = r.actions.size(0);
  nn::PolicyValue out;
  {
    RECORD_USER_SCOPE("tbd::forward");
    out = model->forward(r.observations.to(model->fc->weight.device()));
  }
  const auto log_probs = torch::log_softmax(out.logits, 1);
  const auto entropy = -(log_probs.exp() * log_probs).sum(1).slice(0, 0, steps);
  const auto values = out.value.slice(0, 0, steps);

  // n-step returns, backwards from the bootstrap value V(s_t_max).
  const auto rewards = r.rewards.to(torch::kCPU);
  const auto dones = r.dones.to(torch::kCPU);
  const float* reward = rewards.data_ptr<float>();
  const float* done = dones.data_ptr<float>();
  auto returns = torch::empty({steps}, torch::kFloat);
  float* ret = returns.data_ptr<float>();
  double R = out.value[steps].item<double>();
  for (int64_t t = steps - 1; t >= 0; --t) {
    R = reward[t] + c.gamma * R * (1.0 - done[t]);
    ret[t] = static_cast<float>(R);
  }
  const auto advantage = returns.to(values.device()) - values;
  const auto taken = log_probs.slice(0, 0, steps).gather(1, r.actions.to(values.device()).unsqueeze(1)).squeeze(1);
  const auto policy = -(taken * advantage.detach()).sum() - c.entropy * entropy.sum();
  const auto value = advantage.pow(2).sum();
  return {policy + c.value_coef * value, policy.detach(), value.detach(), entropy.sum().detach()};
}

A3CWorker::A3CWorker(int id, std::unique_ptr<envs::FrameStack> env, nn::AtariNetConfig net, A3CConfig config,
                     uint64_t seed, torch::Device device)
    : id_(id),
      env_(std::move(env)),
      local_(net),
      config_(config),
      seed_(seed),
      device_(device),
      rng_(derive_seed(seed, 0)) {
  local_->to(device_);
  local_->train();
  const int64_t T = config_.t_max;
  rollout_.observations = torch::zeros({T + 1, env_->stack(), envs::kFrameSize, envs::kFrameSize});
  rollout_.actions = torch::zeros({T}, torch::kInt64);
  rollout_.rewards = torch::zeros({T});
  rollout_.dones = torch::zeros({T});
  new_episode();
}

void A3CWorker::new_episode() {
  const auto t0 = Clock::now();
  env_->reset(derive_seed(seed_, 1 + static_cast<uint64_t>(counters_.episodes)));
  counters_.env_s += seconds_since(t0);
  episode_return_ = 0;
}

void A3CWorker::play_rollout() {
  const int T = config_.t_max;
  auto obs = rollout_.observations;
  float* obs_data = obs.data_ptr<float>();
  const int64_t obs_stride = obs.stride(0);
  int64_t* actions = rollout_.actions.data_ptr<int64_t>();
  float* rewards = rollout_.rewards.data_ptr<float>();
  float* dones = rollout_.dones.data_ptr<float>();
  env_->observation(obs_data);  // s_0: where the previous rollout left off
  const int n_actions = env_->action_count();
  for (int t = 0; t < T; ++t) {
    int action = n_actions - 1;
    {
      RECORD_USER_SCOPE("a3c::act");
      torch::NoGradGuard no_grad;
      const auto logits = local_->forward(obs[t].unsqueeze(0).to(device_)).logits;
      const auto probs = torch::softmax(logits[0], 0).to(torch::kCPU).contiguous();
      const float* p = probs.data_ptr<float>();
      double u = rng_.uniform(0, 1), cumulative = 0;
      for (int a = 0; a < n_actions; ++a) {
        cumulative += p[a];
        if (u < cumulative) {
          action = a;
          break;
        }
      }
    }
    envs::AgentStep step;
    {
      RECORD_USER_SCOPE("a3c::env");
      const auto t0 = Clock::now();
      step = env_->step(action);
      counters_.env_s += seconds_since(t0);
    }
    ++counters_.agent_steps;
    counters_.frames += env_->skip();  // the frame unit: 4 per agent step, as Atari results count them
    episode_return_ += step.reward;
    actions[t] = action;
    rewards[t] = static_cast<float>(config_.clip_rewards ? std::clamp(step.reward, -1.0, 1.0) : step.reward);
    dones[t] = step.done ? 1.0f : 0.0f;
    if (step.done) {
      finished_returns_.push_back(episode_return_);
      ++counters_.episodes;
      new_episode();
    }
    env_->observation(obs_data + (t + 1) * obs_stride);
  }
}

double A3CWorker::rollout_and_update(nn::AtariNet& shared, SharedRMSprop& optimizer) {
  const auto t0 = Clock::now();
  const auto local_params = local_->parameters();
  {
    RECORD_USER_SCOPE("a3c::sync");
    torch::NoGradGuard no_grad;
    const auto shared_params = shared->parameters();
    for (size_t i = 0; i < local_params.size(); ++i) local_params[i].copy_(shared_params[i]);
  }
  play_rollout();
  local_->zero_grad(true);  // normally none left: only after a failed update
  const A3CLoss loss = a3c_loss(local_, rollout_, config_);
  {
    RECORD_USER_SCOPE("tbd::backward");
    loss.total.backward();
  }
  {
    RECORD_USER_SCOPE("tbd::optimizer");
    torch::nn::utils::clip_grad_norm_(local_params, config_.max_grad_norm);
    std::vector<torch::Tensor> grads;
    grads.reserve(local_params.size());
    for (const auto& p : local_params) grads.push_back(p.grad());
    optimizer.step(grads);    // hogwild: no lock; other workers may be stepping too
    local_->zero_grad(true);  // freed now, so nothing of this update outlives the iteration
  }
  counters_.busy_s += seconds_since(t0);
  return loss.total.item<double>();
}

std::vector<double> A3CWorker::take_episode_returns() {
  std::vector<double> out;
  out.swap(finished_returns_);
  return out;
}

}  // namespace tbd::rl
