// a3c: asynchronous advantage actor-critic (Mnih et al. 2016) on Atari-like
// games: `--batch-size` worker threads (default 8) share one network and one
// RMSprop and update them without locks (hogwild). One iteration is every
// worker playing one rollout of t_max agent steps and applying one update;
// the sample unit is the emulator frame (4 per agent step, frame skip 4).
// docs/workloads.md#a3c says what the probes mean for it.
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "tbd/core/error.h"
#include "tbd/envs/games.h"
#include "tbd/nn/atari_net.h"
#include "tbd/rl/a3c_trainer.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

nn::AtariNetConfig config_for(Scale scale, int64_t actions) {
  nn::AtariNetConfig c;
  c.actions = actions;
  if (scale == Scale::tiny) c.conv1 = 4, c.conv2 = 8, c.hidden = 32;  // same layers, narrower
  return c;
}

int64_t actions_of(const std::string& game) { return envs::make_game(game)->action_count(); }

class A3C final : public Workload {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "a3c",
        .domain = "deep reinforcement learning",
        .model =
            "A3C (Mnih et al. 2016): conv 16 8x8/4, conv 32 4x4/2, fc 256, policy and value heads on 84x84x4 "
            "frames; asynchronous worker threads (hogwild), shared RMSprop",
        .dataset = "built-in Atari-like games (pong, breakout) rendered to 84x84 grayscale frames; no emulator or ROMs",
        .sample_unit = "frames",
        .default_batch = 8,
        .settings = {envs_setting(),
                     integer_setting("t_max", 20, 1, 10000,
                                     "agent steps per rollout (n-step return); unset: 20 at full scale, 5 at small "
                                     "and tiny"),
                     real_setting("lr", 7e-4, 0.0, 1.0, "shared RMSprop learning rate (alpha 0.99, eps 0.1)"),
                     real_setting("gamma", 0.99, 0.0, 1.0, "discount factor"),
                     real_setting("entropy", 0.01, 0.0, 10.0, "entropy bonus weight"),
                     integer_setting("worker_threads", 0, 0, 1024,
                                     "intra-op threads of each worker; 0: max(1, --threads / workers)")},
        .data_parallel_refusal =
            "A3C is already parallel: its workers (--batch-size of them, default 8) are threads that update one "
            "shared model asynchronously (hogwild) inside one process; averaging gradients across processes would "
            "make it synchronous, a different algorithm (A2C). Run it without --nproc, torchrun or Slurm tasks, "
            "and give more workers with --batch-size",
        .grad_accum_refusal =
            "A3C has no one optimizer step per iteration to accumulate towards: each worker thread updates the "
            "shared model by itself (hogwild) after every rollout of t_max agent steps; give longer rollouts "
            "with --set t_max=... or more workers with --batch-size",
        .cuda_graph_refusal =
            "steps its shared model from several worker threads (hogwild), each with its own environments: no "
            "one step of one thread for a graph to hold",
        .batch_unit = "worker threads"};
    return info;
  }

  int64_t full_scale_parameters(const Settings& settings) const override {
    return nn::atari_net_parameters(config_for(Scale::full, actions_of(settings.text("game"))));
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    if (options.precision != Precision::fp32)
      throw UsageError("a3c runs in fp32 only: its workers' batch-1 policy steps gain nothing from " +
                       std::string(to_string(options.precision)) + "; drop --precision");
    if (!options.data_path.empty())
      throw UsageError(
          "a3c plays built-in games and reads no dataset; drop --data and choose a game with "
          "--set game=pong|breakout");
    game_ = settings.text("game");
    rl::A3CTrainerConfig c;
    c.workers = static_cast<int>(options.batch_size);
    c.net = config_for(options.scale, actions_of(game_));
    const bool t_max_given = options.settings.count("t_max") > 0;
    c.a3c.t_max = static_cast<int>(t_max_given || options.scale == Scale::full ? settings.integer("t_max") : 5);
    c.a3c.gamma = settings.real("gamma");
    c.a3c.entropy = settings.real("entropy");
    c.rmsprop.lr = settings.real("lr");
    const int64_t per_worker = settings.integer("worker_threads");
    c.intra_op_threads = per_worker > 0 ? static_cast<int>(per_worker) : std::max(1, at::get_num_threads() / c.workers);
    c.seed = options.seed;
    c.device = device;
    const std::string game = game_;
    trainer_ = std::make_unique<rl::A3CTrainer>(c, [game](int) { return envs::make_game(game); });
  }

  Batch next_batch() override {
    // The workers play their own frames inside step(): nothing to fetch.
    Batch b;
    b.samples = trainer_->frames_per_iteration();
    return b;
  }

  StepOutput step(const std::vector<Batch>&, Phases&) override {
    // Worker threads open no probe phases (probes attribute one thread's
    // phases); they mark tbd::forward/backward/optimizer ranges for traces.
    const rl::IterationSummary s = trainer_->iterate();
    const auto returns = trainer_->take_episode_returns();
    returns_.insert(returns_.end(), returns.begin(), returns.end());
    return {torch::tensor(s.mean_loss, torch::kDouble)};
  }

  ParameterSet state() const override {
    ParameterSet s;
    s.add(*trainer_->shared_model());
    s.optimizer_state = trainer_->optimizer().square_averages();
    return s;
  }

  // t_max and worker_threads depend on the scale and --threads when unset.
  std::map<std::string, std::string> resolved_settings() const override {
    const auto& c = trainer_->config();
    return {{"t_max", std::to_string(c.a3c.t_max)}, {"worker_threads", std::to_string(c.intra_op_threads)}};
  }

  nlohmann::json configuration() const override {
    const auto& c = trainer_->config();
    return {{"game", game_},
            {"actions", c.net.actions},
            {"workers", c.workers},
            {"t_max", c.a3c.t_max},
            {"frame_skip", c.frame_skip},
            {"frame_stack", c.frame_stack},
            {"frames_per_iteration", trainer_->frames_per_iteration()},
            {"intra_op_threads_per_worker", c.intra_op_threads},
            {"network", {{"conv1", c.net.conv1}, {"conv2", c.net.conv2}, {"hidden", c.net.hidden}}},
            {"gamma", c.a3c.gamma},
            {"entropy", c.a3c.entropy},
            {"value_coef", c.a3c.value_coef},
            {"max_grad_norm", c.a3c.max_grad_norm},
            {"reward_clipping", c.a3c.clip_rewards ? "[-1, 1]" : "none"},
            {"rmsprop", {{"lr", c.rmsprop.lr}, {"alpha", c.rmsprop.alpha}, {"eps", c.rmsprop.eps}}}};
  }

  void begin_measurement() override {
    at_begin_ = trainer_->counters();
    returns_at_begin_ = returns_.size();
    measuring_ = true;
  }

  nlohmann::json measurement() const override {
    if (!measuring_) return nullptr;
    const rl::WorkerCounters now = trainer_->counters();
    const double env_s = now.env_s - at_begin_.env_s, busy_s = now.busy_s - at_begin_.busy_s;
    const int64_t steps = now.agent_steps - at_begin_.agent_steps, frames = now.frames - at_begin_.frames;
    const std::vector<double> returns(returns_.begin() + static_cast<std::ptrdiff_t>(returns_at_begin_),
                                      returns_.end());
    double mean_return = 0;
    for (double r : returns) mean_return += r / static_cast<double>(returns.size());
    const auto per_step = [&](double v) {
      return steps > 0 ? nlohmann::json(v / static_cast<double>(steps)) : nlohmann::json(nullptr);
    };
    const auto share = busy_s > 0 ? nlohmann::json(env_s / busy_s) : nlohmann::json(nullptr);
    nlohmann::json m;
    m["env"] = {{"game", game_},
                {"seconds", env_s},
                {"agent_steps", steps},
                {"frames", frames},
                {"seconds_per_agent_step", per_step(env_s)},
                {"seconds_per_frame",
                 frames > 0 ? nlohmann::json(env_s / static_cast<double>(frames)) : nlohmann::json(nullptr)},
                {"share_of_worker_time", share},
                {"note",
                 "thread-seconds summed over the workers inside the environment (reset, frame skip, "
                 "rendering, max-pooling and stacking), measured iterations only"}};
    m["workers"] = {{"count", trainer_->config().workers},
                    {"busy_seconds", busy_s},
                    {"learning_seconds", busy_s - env_s},
                    {"note", "thread-seconds of rollouts and updates summed over the workers; learning = busy - env"}};
    m["episodes"] = {{"completed", returns.size()},
                     {"mean_return", returns.empty() ? nlohmann::json(nullptr) : nlohmann::json(mean_return)}};
    const auto& c = trainer_->config();
    // (`batch` in the config line above counts workers here, not frames.)
    std::string summary = fmt::format("{} workers x {} steps x {} frames = {} frames per iteration; ", c.workers,
                                      c.a3c.t_max, c.frame_skip, trainer_->frames_per_iteration());
    if (steps > 0 && busy_s > 0)
      summary += fmt::format("env {:.1f}% of worker time, {:.1f} us per agent step", 100 * env_s / busy_s,
                             1e6 * env_s / static_cast<double>(steps));
    else
      summary += "no measured agent step";
    summary += fmt::format("; {} episode{} ended", returns.size(), returns.size() == 1 ? "" : "s");
    if (!returns.empty()) summary += fmt::format(", mean return {:.2f}", mean_return);
    m["summary"] = summary;
    return m;
  }

 private:
  static SettingSpec envs_setting() {
    return choice_setting("game", "pong", envs::game_names(), "built-in Atari-like game");
  }

  std::string game_;
  std::unique_ptr<rl::A3CTrainer> trainer_;
  std::vector<double> returns_;  // every finished episode, in order
  rl::WorkerCounters at_begin_;
  size_t returns_at_begin_ = 0;
  bool measuring_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_a3c() { return std::make_unique<A3C>(); }

}  // namespace tbd
