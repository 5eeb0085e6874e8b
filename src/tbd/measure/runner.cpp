#include "tbd/core/utc_time.h"
#include "tbd/measure/runner.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <new>
#include <optional>

#include "tbd/core/grad_scaler.h"
#include "tbd/core/error.h"
#include "tbd/core/registry.h"
#include "tbd/core/rng.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/process_group.h"
#include "tbd/measure/device.h"
#include "tbd/measure/environment.h"
#include "tbd/measure/interrupt.h"
#include "tbd/measure/kernel_summary.h"
#include "tbd/measure/probe.h"
#include "tbd/measure/statistics.h"
#include "tbd/measure/trace_probe.h"

namespace tbd {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}


// Progress on a terminal only; piped output stays clean.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void show(const char* what, int64_t done, int64_t total) {
    if (!enabled_) return;
    if (total > 0)
      std::fprintf(stderr, "\r  %s %lld/%lld   ", what, static_cast<long long>(done),
                   static_cast<long long>(total));
    else
      std::fprintf(stderr, "\r  %s %lld   ", what, static_cast<long long>(done));
    std::fflush(stderr);
  }
  void clear() {
    if (enabled_) std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  bool enabled_;
};

c10::ScalarType autocast_type(Precision p) {
  switch (p) {
    case Precision::bf16: return c10::ScalarType::BFloat16;
    case Precision::fp16: return c10::ScalarType::Half;
    case Precision::fp32:
    case Precision::tf32: break;
  }
  return c10::ScalarType::Float;
}

// fp32 means exact float32: LibTorch lets cuDNN use TF32 by default, which
// would make "fp32" convolutions tensor-core TF32. tf32 allows it everywhere.
void set_tf32(Precision p) {
  const bool on = p == Precision::tf32;
  at::globalContext().setAllowTF32CuBLAS(on);
  at::globalContext().setAllowTF32CuDNN(on);
}

// Everything one run needs, wired together.
struct Session {
  RunOptions options;
  c10::Device device{c10::kCPU};
  std::unique_ptr<Workload> workload;
  Settings settings;
  std::vector<std::unique_ptr<Probe>> probes;
  std::unique_ptr<Phases> phases;
  std::unique_ptr<ProcessGroup> group;       // distributed runs only
  std::unique_ptr<GradientReducer> reducer;  // distributed runs only
  std::unique_ptr<GradScaler> scaler;        // fp16 runs only
  std::optional<DeviceTimer> device_timer;   // its CUDA events are reused every iteration
  std::deque<double> recent;  // for auto warm-up
  double first_loss = NAN, last_loss = NAN;
  double measured_samples = 0, measured_seconds = 0;

  // A decision every rank must share (stop warming up, stop measuring): the
  // largest value any rank proposes. One tiny all-reduce per call when distributed.
  int agreed(int local) { return group ? group->max_across_ranks(local) : local; }
};

// Same initial weights everywhere, and the gradient reducer hooked in.
void join_data_parallel(Session& s) {
  const ParameterSet state = s.workload->state();
  std::vector<torch::Tensor> shared = state.weights;
  shared.insert(shared.end(), state.buffers.begin(), state.buffers.end());
  {
    torch::NoGradGuard no_grad;
    s.group->broadcast_from_rank0(shared);
  }
  const auto bucket_bytes = static_cast<int64_t>(s.options.bucket_mb * 1024 * 1024);
  s.reducer = std::make_unique<GradientReducer>(state.weights, *s.group, bucket_bytes, s.options.dist_overlap);
}

nlohmann::json distributed_section(Session& s) {
  const nlohmann::json mine = {{"rank", s.options.rank},
                               {"samples", s.measured_samples},
                               {"seconds", s.measured_seconds},
                               {"samples_per_s", s.measured_seconds > 0 ? s.measured_samples / s.measured_seconds : 0.0}};
  const auto all = s.group->gather_text("throughput", mine.dump());
  if (s.options.rank != 0) return nullptr;
  nlohmann::json per_rank = nlohmann::json::array();
  double global = 0;
  for (const auto& text : all) {
    per_rank.push_back(nlohmann::json::parse(text));
    global += per_rank.back()["samples_per_s"].get<double>();
  }
  return {{"world_size", s.options.world_size},
          {"backend", s.group->backend_name()},
          {"global_batch_size", s.options.batch_size * s.options.world_size},
          {"per_rank", per_rank},
          {"global_samples_per_s", global},
          {"overlap", s.options.dist_overlap},
          {"bucket_mb", s.options.bucket_mb},
          {"gradient_buckets", s.reducer ? s.reducer->bucket_count() : 0}};
}

IterationRecord run_iteration(Session& s, int repetition, int64_t index, bool measured) {
  for (auto& p : s.probes) p->on_iteration_begin(measured);
  IterationRecord r;
  r.repetition = repetition;
  r.index = index;
  r.measured = measured;
  DeviceTimer& device_timer = *s.device_timer;
  const auto t0 = Clock::now();
  device_timer.start();
  Batch batch = s.workload->next_batch();
  r.data_wait_s = seconds_since(t0);
  for (auto& p : s.probes) p->on_batch(batch);
  StepOutput out = s.workload->step(batch, *s.phases);
  device_timer.stop();
  r.loss = out.loss.defined() ? out.loss.item<double>() : NAN;
  synchronize(s.device);
  r.seconds = seconds_since(t0);
  r.device_seconds = device_timer.seconds();
  r.samples = batch.samples;
  if (!std::isfinite(r.loss))
    throw Error("the training loss became " + std::string(std::isnan(r.loss) ? "NaN" : "infinite") +
                " in " + (measured ? "measured" : "warm-up") + " iteration " +
                std::to_string(index + 1) + ": the model diverged; lower the learning rate with "
                "--set lr=..., or try --precision fp32");
  for (auto& p : s.probes) p->on_iteration_end(r);
  return r;
}

bool has_probe(const Session& s, const std::string& name) {
  return std::any_of(s.probes.begin(), s.probes.end(), [&](const auto& p) { return p->name() == name; });
}

// Iterations profiled for the kernel view when no --trace asks for more.
constexpr int kKernelProfileIterations = 3;

struct Profile {
  nlohmann::json saved;    // the trace file's description (null without a path)
  nlohmann::json kernels;  // summarize_kernels() of the device's activity
};

// `iterations` more iterations under the Kineto profiler, after the windows.
Profile profile_iterations(Session& s, const std::string& path, int iterations) {
  TraceRecorder recorder(path, s.device);
  synchronize(s.device);
  recorder.start();
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) run_iteration(s, -1, i, false);
  synchronize(s.device);
  const double wall_s = seconds_since(t0);
  Profile p;
  p.saved = recorder.stop_and_save();
  p.kernels = summarize_kernels(recorder.device_activities(), wall_s, iterations);
  return p;
}

bool settled(const std::deque<double>& recent) {
  constexpr size_t kWindow = 5;
  if (recent.size() < kWindow) return false;
  std::vector<double> last(recent.end() - kWindow, recent.end());
  const double m = mean_of(last);
  return m > 0 && stddev_of(last) / m < 0.05;
}

[[noreturn]] void rethrow_as_run_error(const RunOptions& o) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    throw Error("out of memory on " + o.device + " at batch size " + std::to_string(o.batch_size) +
                ": use a smaller --batch-size (or --scale small)");
  } catch (const std::bad_alloc&) {
    throw Error("out of host memory at batch size " + std::to_string(o.batch_size) +
                ": use a smaller --batch-size (or --scale small)");
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    // The CPU allocator reports exhaustion as a plain enforce failure.
    if (what.find("can't allocate memory") != std::string::npos)
      throw Error("out of host memory at batch size " + std::to_string(o.batch_size) +
                  ": use a smaller --batch-size (or --scale small) (" + what + ")");
    throw Error("LibTorch error: " + what);
  }
}

}  // namespace

void check_data_parallel_supported(const std::string& workload, int processes) {
  if (processes <= 1) return;
  const auto w = create_workload(workload);
  const std::string& why = w->info().data_parallel_refusal;
  if (!why.empty())
    throw UsageError(workload + " does not run data-parallel (" + std::to_string(processes) +
                     " processes were asked for, by --nproc or WORLD_SIZE): " + why);
}

RunOutcome run_benchmark(const RunOptions& requested, const std::vector<std::string>& probe_list,
                         const TraceRequest& trace) {
  validate(requested);
  Session s;
  s.options = requested;
  s.workload = create_workload(requested.workload);
  const WorkloadInfo& info = s.workload->info();
  s.settings = Settings(info.settings, requested.settings, info.name);
  const DistEnvironment dist = read_dist_environment();
  s.device = resolve_device(device_for_rank(requested.device, dist.distributed() ? dist.local_rank : -1));
  make_current(s.device);
  s.device_timer.emplace(s.device);
  set_tf32(s.options.precision);
  if (s.options.batch_size == 0) s.options.batch_size = info.default_batch;
  if (s.options.threads > 0) at::set_num_threads(s.options.threads);
  s.options.threads = at::get_num_threads();
  s.options.rank = dist.rank;
  s.options.world_size = dist.world_size;
  check_data_parallel_supported(requested.workload, dist.world_size);

  s.probes.push_back(make_probe("time"));
  for (const auto& name : probe_list)
    if (name != "time") s.probes.push_back(make_probe(name));
  // Distributed runs always say what their communication cost.
  const bool has_comm = std::find(probe_list.begin(), probe_list.end(), "comm") != probe_list.end();
  if (dist.distributed() && !has_comm) s.probes.push_back(make_probe("comm"));

  nlohmann::json result;
  result["schema"] = "tbd.result/1";
  result["created_utc"] = utc_now();
  result["environment"] = capture_environment();

  RunContext ctx{s.options, info, *s.workload, s.device};
  Progress progress(!s.options.quiet && s.options.rank == 0);
  bool partial = false;
  int64_t warmup_done = 0;
  std::string warmup_end = "count";
  const auto warmup_t0 = Clock::now();
  double warmup_s = 0;
  nlohmann::json workload_metrics;
  try {
    if (dist.distributed())
      s.group = ProcessGroup::connect(dist, s.device,
                                      std::chrono::milliseconds(static_cast<int64_t>(s.options.dist_timeout_s * 1000)));
    seed_everything(s.options.seed);  // the same on every rank; data streams use options.data_seed()
    s.workload->setup(s.options, s.settings, s.device);
    std::vector<PhaseListener*> listeners;
    if (s.group) {
      join_data_parallel(s);
      ctx.gradient_reducer = s.reducer.get();
    }
    for (auto& p : s.probes) listeners.push_back(p.get());
    s.phases = std::make_unique<Phases>(s.device, autocast_type(s.options.precision), listeners);
    s.phases->set_gradient_sync(s.reducer.get());
    if (s.options.precision == Precision::fp16) {  // fp16 needs loss scaling; bf16 does not
      s.scaler = std::make_unique<GradScaler>(s.workload->state().weights);
      s.phases->set_grad_scaler(s.scaler.get());
    }
    for (auto& p : s.probes) p->on_run_start(ctx);

    const int64_t warmup_cap = s.options.warmup_auto ? 50 : s.options.warmup;
    while (warmup_done < warmup_cap) {
      if (s.agreed(interrupt_requested() ? 1 : 0) > 0) {
        partial = true;
        break;
      }
      progress.show("warm-up", warmup_done + 1, s.options.warmup_auto ? 0 : warmup_cap);
      const auto r = run_iteration(s, -1, warmup_done, false);
      ++warmup_done;
      s.recent.push_back(r.seconds);
      if (s.options.warmup_auto && s.agreed(settled(s.recent) ? 1 : 0) > 0) {
        warmup_end = "settled";
        break;
      }
    }
    if (s.options.warmup_auto && warmup_end != "settled") warmup_end = partial ? "interrupted" : "cap";
    warmup_s = seconds_since(warmup_t0);

    for (int rep = 0; rep < s.options.repeat && !partial; ++rep) {
      if (rep == 0) s.workload->begin_measurement();
      for (auto& p : s.probes) p->on_window_begin(rep);
      double window_s = 0;  // measured iteration time of this window: what throughput divides by
      for (int64_t i = 0;; ++i) {
        // Elapsed time and Ctrl-C differ between ranks: agree (0 go on,
        // 1 done, 2 interrupted), so no rank is left alone in an all-reduce.
        const bool done = i >= s.options.iters && window_s >= s.options.min_time;
        const int verdict = s.agreed(interrupt_requested() ? 2 : done ? 1 : 0);
        if (verdict == 2) partial = true;
        if (verdict > 0) break;
        progress.show(s.options.repeat > 1 ? "measuring (repetition)" : "measuring", i + 1,
                      s.options.min_time > 0 ? 0 : s.options.iters);
        const auto r = run_iteration(s, rep, i, true);
        if (std::isnan(s.first_loss)) s.first_loss = r.loss;
        s.last_loss = r.loss;
        s.measured_samples += static_cast<double>(r.samples);
        s.measured_seconds += r.seconds;
        window_s += r.seconds;
      }
      for (auto& p : s.probes) p->on_window_end(rep);
    }
    workload_metrics = s.workload->measurement();
    // Profiled iterations after the windows: for --trace, and on CUDA for the
    // gpu probe's kernel view (Kineto's overhead stays out of every statistic).
    const bool wants_kernels = s.device.is_cuda() && has_probe(s, "gpu");
    if (!trace.path.empty() && !partial) {
      const auto profile = profile_iterations(s, trace.path, trace.iterations);
      result["trace"] = profile.saved;
      result["trace"]["iterations"] = trace.iterations;
      result["trace"]["note"] = "iterations run after the measured window, not part of any statistic";
      if (wants_kernels) for (auto& p : s.probes) p->on_kernel_profile(profile.kernels);
    } else if (wants_kernels && !partial) {
      // Only the kernel view asked for it: a profiler that cannot start
      // (no CUPTI, say) costs the view, not the run.
      nlohmann::json kernels;
      try {
        kernels = profile_iterations(s, "", kKernelProfileIterations).kernels;
      } catch (const Error&) {
        throw;  // the iteration itself failed (a diverged loss): as in any iteration
      } catch (const c10::OutOfMemoryError&) {
        throw;
      } catch (const std::exception& e) {
        const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
        kernels = {{"kernel_busy_share", nullptr},
                   {"not_available", std::string("the Kineto profiler failed: ") +
                                         (c10_error ? c10_error->what_without_backtrace() : e.what())}};
      }
      for (auto& p : s.probes) p->on_kernel_profile(kernels);
    }
    for (auto& p : s.probes) p->on_run_end(ctx);
    if (s.group) result["distributed"] = distributed_section(s);
  } catch (...) {
    progress.clear();
    rethrow_as_run_error(s.options);
  }
  progress.clear();

  const ParameterSet state = s.workload->state();
  result["workload"] = {{"name", info.name},
                        {"domain", info.domain},
                        {"model", info.model},
                        {"dataset", info.dataset},
                        {"sample_unit", info.sample_unit},
                        {"default_batch", info.default_batch},
                        {"options", to_json(s.options)},
                        {"settings", s.settings.values()},
                        {"configuration", s.workload->configuration()}};
  result["partial"] = partial;
  result["warmup"] = {{"iterations", warmup_done},
                      {"mode", s.options.warmup_auto ? "auto" : "fixed"},
                      {"ended_by", warmup_end},
                      {"seconds", warmup_s}};
  result["model"] = {{"parameters", state.parameter_count()},
                     {"trainable_parameters", state.trainable_parameter_count()}};
  result["loss"] = {{"first_measured", std::isnan(s.first_loss) ? nlohmann::json(nullptr) : nlohmann::json(s.first_loss)},
                    {"last_measured", std::isnan(s.last_loss) ? nlohmann::json(nullptr) : nlohmann::json(s.last_loss)}};
  if (s.scaler)
    result["loss_scaling"] = {{"final_scale", s.scaler->current_scale()},
                              {"optimizer_steps", s.scaler->steps()},
                              {"skipped_steps", s.scaler->skipped_steps()}};
  if (!workload_metrics.is_null()) result["workload_metrics"] = workload_metrics;
  result["probes"] = nlohmann::json::array();
  RunOutcome outcome;
  if (workload_metrics.is_object() && workload_metrics.contains("summary"))
    outcome.summary.push_back({info.name, workload_metrics["summary"].get<std::string>()});
  for (auto& p : s.probes) {
    result["probes"].push_back(p->name());
    p->contribute(result);
    for (auto& line : p->summary_lines()) outcome.summary.push_back(line);
  }
  if (result.contains("trace"))
    outcome.summary.push_back({"trace", result["trace"]["file"].get<std::string>() + " (" +
                                            std::to_string(trace.iterations) +
                                            " iterations after the measured window; open in Perfetto)"});
  outcome.result = std::move(result);
  outcome.partial = partial;
  outcome.rank = s.options.rank;
  return outcome;
}

}  // namespace tbd
