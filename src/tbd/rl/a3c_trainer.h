// A3C's asynchronous actor-learners: one shared network and one shared
// RMSprop, and `workers` threads that each own an environment and a local
// copy of the network. iterate() lets every worker do one rollout and one
// update, concurrently and without locks on the shared parameters (hogwild),
// and returns when all have: one tbd iteration. Between iterations the
// workers wait, so the runner's clock and probes see whole iterations.
//
// Each worker thread runs LibTorch ops with `intra_op_threads` OpenMP
// threads (1 by default, as the reference implementations set per worker),
// so workers × intra_op_threads cores are busy at most.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <ATen/ThreadLocalState.h>

#include "tbd/envs/environment.h"
#include "tbd/nn/atari_net.h"
#include "tbd/rl/a3c_worker.h"
#include "tbd/rl/shared_rmsprop.h"

namespace tbd::rl {

struct A3CTrainerConfig {
  int workers = 8;
  int intra_op_threads = 1;  // per worker
  int frame_skip = 4, frame_stack = 4;
  nn::AtariNetConfig net;
  A3CConfig a3c;
  RMSpropConfig rmsprop;
  uint64_t seed = 42;
  torch::Device device{torch::kCPU};
};

struct IterationSummary {
  double mean_loss = 0;  // of the workers' rollouts
  int64_t frames = 0;    // emulator frames played by all workers
  int64_t agent_steps = 0;
};

class A3CTrainer {
 public:
  using EnvironmentFactory = std::function<std::unique_ptr<envs::Environment>(int worker)>;

  A3CTrainer(A3CTrainerConfig config, EnvironmentFactory make_environment);
  ~A3CTrainer();
  A3CTrainer(const A3CTrainer&) = delete;
  A3CTrainer& operator=(const A3CTrainer&) = delete;

  IterationSummary iterate();  // rethrows the first worker's error, if any

  nn::AtariNet& shared_model() { return shared_; }
  const nn::AtariNet& shared_model() const { return shared_; }
  const SharedRMSprop& optimizer() const { return *optimizer_; }
  const A3CTrainerConfig& config() const { return config_; }
  int64_t frames_per_iteration() const;

  // Summed over the workers since construction (call between iterations).
  WorkerCounters counters() const;
  // Episode returns finished since the last call, from every worker.
  std::vector<double> take_episode_returns();

 private:
  void worker_main(int index);

  A3CTrainerConfig config_;
  nn::AtariNet shared_{nullptr};
  std::unique_ptr<SharedRMSprop> optimizer_;
  std::vector<std::unique_ptr<A3CWorker>> workers_;
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_, thread_ready_;
  uint64_t generation_ = 0;  // incremented by iterate(); a worker runs once per value
  int pending_ = 0;          // workers still running this iteration
  int started_ = 0;          // threads that have set themselves up
  bool stopping_ = false;
  std::optional<at::ThreadLocalState> caller_state_;  // profiler, grad mode of iterate()'s caller
  std::vector<double> losses_;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace tbd::rl
