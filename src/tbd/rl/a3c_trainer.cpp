#include "tbd/rl/a3c_trainer.h"

#include <ATen/Parallel.h>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/envs/frame_stack.h"

namespace tbd::rl {

A3CTrainer::A3CTrainer(A3CTrainerConfig config, EnvironmentFactory make_environment) : config_(std::move(config)) {
  if (config_.workers < 1) throw Error("A3C needs at least one worker, got " + std::to_string(config_.workers));
  if (config_.a3c.t_max < 1) throw Error("A3C needs t_max of at least 1, got " + std::to_string(config_.a3c.t_max));
  shared_ = nn::AtariNet(config_.net);
  shared_->to(config_.device);
  optimizer_ = std::make_unique<SharedRMSprop>(shared_->parameters(), config_.rmsprop);
  for (int i = 0; i < config_.workers; ++i) {
    auto env = std::make_unique<envs::FrameStack>(make_environment(i), config_.frame_skip, config_.frame_stack);
    if (env->action_count() != config_.net.actions)
      throw Error("environment '" + env->environment().name() + "' has " + std::to_string(env->action_count()) +
                  " actions but the network has " + std::to_string(config_.net.actions) + " policy outputs");
    workers_.push_back(std::make_unique<A3CWorker>(i, std::move(env), config_.net, config_.a3c,
                                                   derive_seed(config_.seed, 1000 + static_cast<uint64_t>(i)),
                                                   config_.device));
  }
  losses_.assign(config_.workers, 0.0);
  errors_.assign(config_.workers, nullptr);
  // Threads start one at a time: each sets its own intra-op thread count,
  // which also resets LibTorch's process-wide default (and caches) -- not
  // something to do while another worker computes.
  const int caller_threads = at::get_num_threads();
  for (int i = 0; i < config_.workers; ++i) {
    threads_.emplace_back([this, i] { worker_main(i); });
    std::unique_lock<std::mutex> lock(mutex_);
    thread_ready_.wait(lock, [&] { return started_ == i + 1; });
  }
  at::set_num_threads(caller_threads);  // the process-wide default, back to the caller's
}

A3CTrainer::~A3CTrainer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void A3CTrainer::worker_main(int index) {
  at::internal::lazy_init_num_threads();
  at::set_num_threads(std::max(1, config_.intra_op_threads));
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  ++started_;
  thread_ready_.notify_all();
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    const at::ThreadLocalState state = *caller_state_;
    lock.unlock();
    try {
      // The caller's thread-local state: grad mode, and the profilers the
      // runner installed (memory reporting, a --trace recording), so they
      // see this worker's work too.
      at::ThreadLocalStateGuard guard(state);
      losses_[index] = workers_[index]->rollout_and_update(shared_, *optimizer_);
    } catch (...) {
      errors_[index] = std::current_exception();
    }
    lock.lock();
    if (--pending_ == 0) work_done_.notify_all();
  }
}

IterationSummary A3CTrainer::iterate() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_state_.emplace();
    pending_ = config_.workers;
    ++generation_;
    work_ready_.notify_all();
    work_done_.wait(lock, [&] { return pending_ == 0; });
    caller_state_.reset();
  }
  std::exception_ptr first;
  for (auto& e : errors_)
    if (e && !first) first = e;
  errors_.assign(errors_.size(), nullptr);
  if (first) std::rethrow_exception(first);
  IterationSummary s;
  for (double l : losses_) s.mean_loss += l / config_.workers;
  s.frames = frames_per_iteration();
  s.agent_steps = static_cast<int64_t>(config_.workers) * config_.a3c.t_max;
  return s;
}

int64_t A3CTrainer::frames_per_iteration() const {
  return static_cast<int64_t>(config_.workers) * config_.a3c.t_max * config_.frame_skip;
}

WorkerCounters A3CTrainer::counters() const {
  WorkerCounters sum;
  for (const auto& w : workers_) {
    const auto& c = w->counters();
    sum.env_s += c.env_s;
    sum.busy_s += c.busy_s;
    sum.agent_steps += c.agent_steps;
    sum.frames += c.frames;
    sum.episodes += c.episodes;
  }
  return sum;
}

std::vector<double> A3CTrainer::take_episode_returns() {
  std::vector<double> all;
  for (auto& w : workers_) {
    const auto r = w->take_episode_returns();
    all.insert(all.end(), r.begin(), r.end());
  }
  return all;
}

}  // namespace tbd::rl
