#include "tbd/measure/runner.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <new>
#include <optional>
#include <set>
#include <string_view>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/rng.h"
#include "tbd/core/statistics.h"
#include "tbd/core/utc_time.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/measure/machine/environment.h"
#include "tbd/measure/ops/kernel_summary.h"
#include "tbd/measure/probes/execution_trace.h"
#include "tbd/measure/probes/trace_probe.h"
#include "tbd/measure/run_session.h"

namespace tbd {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Progress on a terminal only; piped output stays clean. Printed between
// iterations, never inside a timed one.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void show(const char* what, int64_t done, int64_t total) {
    if (!enabled_) return;
    if (total > 0)
      std::fprintf(stderr, "\r  %s %lld/%lld   ", what, static_cast<long long>(done), static_cast<long long>(total));
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

// fp32 means exact float32: LibTorch lets cuDNN use TF32 by default, which
// would make "fp32" convolutions tensor-core TF32. tf32 allows it everywhere.
void set_tf32(Precision p) {
  const bool on = p == Precision::tf32;
  at::globalContext().setAllowTF32CuBLAS(on);
  at::globalContext().setAllowTF32CuDNN(on);
}

bool set_cudnn_autotuning(const c10::Device& device, const WorkloadInfo& info) {
  const bool on = cudnn_autotuning_for(device, info);
  at::globalContext().setBenchmarkCuDNN(on);
  return on;
}

// What to try when the loss diverges, in this workload's own words: its
// learning-rate setting if it has one, and lower precision only when the
// run used one.
std::string divergence_hint(const Session& s) {
  std::vector<std::string> rate_keys;
  for (const auto& spec : s.workload->info().settings)
    if (spec.key == "lr" || spec.key == "lr_factor") rate_keys.push_back(spec.key);
  std::string hint = rate_keys.empty() ? "lower the learning rate"
                                       : "lower the learning rate with --set " + rate_keys.front() + "=...";
  if (s.options.precision != Precision::fp32) hint += ", or try --precision fp32";
  if (!s.options.data_path.empty()) hint += ", and check the data in " + s.options.data_path + " for NaN or Inf values";
  return hint;
}

// "NaN or infinite values (input 0, 12 of 4096 elements)", or empty when
// every floating-point input and target is finite.
std::string non_finite_inputs(const Batch& batch) {
  const auto check = [](const std::vector<torch::Tensor>& tensors, const char* kind) -> std::string {
    for (size_t i = 0; i < tensors.size(); ++i) {
      const torch::Tensor& t = tensors[i];
      if (!t.defined() || !t.is_floating_point()) continue;
      const int64_t bad = (~torch::isfinite(t)).sum().item<int64_t>();
      if (bad > 0)
        return "NaN or infinite values (" + std::string(kind) + " " + std::to_string(i) + ": " + std::to_string(bad) +
               " of " + std::to_string(t.numel()) + " elements)";
    }
    return "";
  };
  const std::string in = check(batch.inputs, "input");
  return in.empty() ? check(batch.targets, "target") : in;
}

// The same for the micro-batches of one iteration, naming the micro-batch when there are several.
std::string non_finite_inputs(const std::vector<Batch>& micro_batches) {
  for (size_t i = 0; i < micro_batches.size(); ++i)
    if (std::string bad = non_finite_inputs(micro_batches[i]); !bad.empty())
      return micro_batches.size() == 1
                 ? bad
                 : bad + " in micro-batch " + std::to_string(i + 1) + " of " + std::to_string(micro_batches.size());
  return "";
}

// Counts the micro-batches' shapes of a warm-up or timed iteration.
void record_shapes(Session& s, const std::vector<Batch>& micro_batches, std::string_view what) {
  if (what == "warm-up") {
    for (const Batch& b : micro_batches) ++s.shapes.warmup[batch_shape(b)];
  } else if (what == "timed") {
    bool first_seen = false;
    for (const Batch& b : micro_batches) {
      const std::string key = batch_shape(b);
      ++s.shapes.timed[key];
      first_seen = first_seen || !s.shapes.warmup.contains(key);
    }
    s.shapes.timed_first_seen += first_seen ? 1 : 0;
  }
}

// One training iteration (one optimizer step), timed from the request for
// its first batch to the device's completion of its step. Its --grad-accum
// micro-batches are all fetched first (data wait), so the step itself waits
// for no data; the iteration counts the samples of all of them. Only
// `probes` are told about it.
IterationRecord run_iteration(Session& s, const std::vector<Probe*>& probes, Phases& phases, int repetition,
                              int64_t index, bool measured, const char* what) {
  for (auto* p : probes) p->on_iteration_begin(measured);
  IterationRecord r;
  r.repetition = repetition;
  r.index = index;
  r.measured = measured;
  DeviceTimer& device_timer = *s.device_timer;
  const auto t0 = Clock::now();
  device_timer.start();
  std::vector<Batch> micro_batches;
  micro_batches.reserve(static_cast<size_t>(s.options.grad_accum));
  for (int64_t i = 0; i < s.options.grad_accum; ++i) micro_batches.push_back(s.workload->next_batch());
  r.data_wait_s = seconds_since(t0);
  for (const Batch& batch : micro_batches)
    for (auto* p : probes) p->on_batch(batch);
  // The instrumented iterations (probe callbacks on every op) always run
  // eagerly; the timed and profiled ones replay the graph when there is one.
  StepOutput out = s.graph_step && &phases == s.phases.get() ? s.graph_step->run(*s.workload, micro_batches, phases)
                                                             : s.workload->step(micro_batches, phases);
  r.phases = phases.take_clock();
  device_timer.stop();
  r.loss = out.loss.defined() ? out.loss.item<double>() : NAN;
  synchronize(s.device);
  r.seconds = seconds_since(t0);
  r.device_seconds = device_timer.seconds();
  record_shapes(s, micro_batches, what);  // after the clock stopped
  r.samples = 0;
  for (const Batch& batch : micro_batches) r.samples += batch.samples;
  if (!std::isfinite(r.loss)) {
    const std::string loss = "the training loss became " + std::string(std::isnan(r.loss) ? "NaN" : "infinite") +
                             " in " + what + " iteration " + std::to_string(index + 1);
    // Bad input is checked first: a NaN in the data is no reason to lower the learning rate.
    if (const std::string bad = non_finite_inputs(micro_batches); !bad.empty())
      throw Error(loss + " because its input batch holds " + bad + ": the data, not the model; " +
                  (s.options.data_path.empty() ? std::string("the synthetic generator produced them (a bug in tbd)")
                                               : "check the data in " + s.options.data_path +
                                                     " for NaN or Inf values (a reader that meets them in a "
                                                     "file names it)"));
    throw Error(loss + ": the model diverged; " + divergence_hint(s));
  }
  for (auto* p : probes) p->on_iteration_end(r);
  return r;
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
    // An Error, not a UsageError: a sweep records this point and goes on to batch size 2.
    if (what.find("Expected more than 1 value per channel when training") != std::string::npos)
      throw Error("batch size " + std::to_string(o.batch_size) + " is too small for " + o.workload +
                  ": its batch normalisation needs more than one value per channel to compute batch statistics "
                  "in training; use --batch-size 2 or more (LibTorch: " +
                  what + ")");
    throw Error("LibTorch error: " + what);
  }
}

// Same initial weights everywhere, and the gradient reducer hooked in.
void join_data_parallel(Session& s) {
  const ParameterSet state = s.workload->state();
  // Parameters every rank holds alike; not a rank's own part of a sharded table.
  std::set<const c10::TensorImpl*> local;
  for (const auto& p : s.workload->rank_local_parameters()) local.insert(p.unsafeGetTensorImpl());
  std::vector<torch::Tensor> replicated;
  for (const auto& w : state.weights)
    if (!local.count(w.unsafeGetTensorImpl())) replicated.push_back(w);
  std::vector<torch::Tensor> shared = replicated;
  shared.insert(shared.end(), state.buffers.begin(), state.buffers.end());
  {
    torch::NoGradGuard no_grad;
    s.group->broadcast_from_rank0(shared);
  }
  const auto bucket_bytes = static_cast<int64_t>(s.options.bucket_mb * 1024 * 1024);
  if (s.options.sharding == Sharding::full && s.workload->shard_units().empty())
    throw UsageError("--sharding full: " + s.options.workload +
                     " declares no wrapping units (the modules gathered just before they compute and freed "
                     "after), so its parameters cannot be sharded; use --sharding gradients (ZeRO-2) or none");
  if (s.options.sharding != Sharding::none)
    s.sharded = std::make_unique<ShardedDataParallel>(
        state.weights, s.workload->optimizers(), s.workload->shard_units(), *s.group, bucket_bytes,
        s.options.dist_overlap, s.options.sharding, autocast_type(s.options.precision));
  else
    s.reducer = std::make_unique<GradientReducer>(replicated, *s.group, bucket_bytes, s.options.dist_overlap);
}

}  // namespace

void check_sharding_supported(const WorkloadInfo& info, const RunOptions& o, bool ranks_available) {
  if (o.sharding == Sharding::none) return;
  const std::string flag = std::string("--sharding ") + to_string(o.sharding);
  if (!ranks_available)
    throw UsageError(flag +
                     " shards the model state across data-parallel ranks, and this run has none: add --nproc N "
                     "(--nproc 1 runs every sharding path with one rank) or start it under torchrun or Slurm");
  if (!info.data_parallel_refusal.empty())
    throw UsageError(flag + ": " + info.name + " cannot shard its model state: " + info.data_parallel_refusal);
  if (!info.sharding_refusal.empty())
    throw UsageError(flag + ": " + info.name + " cannot shard its model state: " + info.sharding_refusal);
  if (o.precision == Precision::fp16)
    throw UsageError(flag +
                     " with --precision fp16: loss scaling unscales and checks whole gradients, which sharding "
                     "does not keep; use --precision bf16 (no loss scaling) or --sharding none");
}

void check_embedding_sharding_supported(const WorkloadInfo& info, const RunOptions& o, bool ranks_available) {
  if (o.embedding_sharding == EmbeddingSharding::replicate) return;
  const std::string flag = std::string("--embedding-sharding ") + to_string(o.embedding_sharding);
  if (!info.shardable_embedding_tables)
    throw UsageError(flag + ": " + info.name + " has no embedding tables to place across ranks (dlrm has)");
  if (!ranks_available)
    throw UsageError(flag +
                     " places the embedding tables across data-parallel ranks, and this run has none: add --nproc "
                     "N (--nproc 1 runs the sharded path with one rank) or start it under torchrun or Slurm");
}

void refuse_data_parallel(const WorkloadInfo& info, int processes) {
  if (processes <= 1 || info.data_parallel_refusal.empty()) return;
  throw UsageError(info.name + " does not run data-parallel (" + std::to_string(processes) +
                   " processes were asked for, by --nproc or WORLD_SIZE): " + info.data_parallel_refusal);
}

namespace {

// Step 1a: options resolved, probes made, the device chosen. Nothing that
// can fail for lack of memory or a peer happens here.
void configure_session(Session& s, const RunOptions& requested, const std::vector<std::string>& probe_list) {
  validate(requested);
  s.options = requested;
  const WorkloadInfo& info = s.workload->info();
  s.settings = Settings(info.settings, requested.settings, info.name);
  s.dist = read_dist_environment();  // once: the launcher's variables do not change during a run
  const DistEnvironment& dist = s.dist;
  refuse_data_parallel(info, dist.world_size);
  check_sharding_supported(info, requested, dist.source != "none");
  check_embedding_sharding_supported(info, requested, dist.source != "none");
  check_grad_accum_supported(info, requested.grad_accum);
  s.device = resolve_device(device_for_rank(requested.device, dist.distributed() ? dist.local_rank : -1));
  make_current(s.device);
  s.device_timer.emplace(s.device);
  s.cuda_graphs = decide_cuda_graphs(info, requested, s.device,
                                     dist.distributed() || requested.sharding != Sharding::none ||
                                         requested.embedding_sharding != EmbeddingSharding::replicate);
  set_tf32(s.options.precision);
  s.cudnn_benchmark = set_cudnn_autotuning(s.device, info);
  s.host_allocator = apply_host_allocator(s.options.host_allocator);
  if (s.options.batch_size == 0) s.options.batch_size = info.default_batch;
  if (s.options.threads > 0) at::set_num_threads(s.options.threads);
  s.options.threads = at::get_num_threads();
  s.options.rank = dist.rank;
  s.options.world_size = dist.world_size;
  s.probes = make_probes(probe_list, dist.distributed());
  for (auto& p : s.probes) (p->kind() == ProbeKind::timed ? s.timed_probes : s.analysis_probes).push_back(p.get());
  s.created_utc = utc_now();
  s.environment = capture_environment();
}

// Step 1b: peers joined, the workload built, the Phases wired.
void open_session(Session& s) {
  // One rank with --sharding (--nproc 1) still gets its group: every
  // collective of the sharded path runs, among one.
  if (s.dist.distributed() || s.options.sharding != Sharding::none ||
      s.options.embedding_sharding != EmbeddingSharding::replicate)
    s.group = ProcessGroup::connect(s.dist, s.device,
                                    std::chrono::milliseconds(static_cast<int64_t>(s.options.dist_timeout_s * 1000)));
  seed_everything(s.options.seed);  // the same on every rank; data streams use options.data_seed()
  if (s.group) s.workload->set_process_group(s.group.get());
  s.workload->setup(s.options, s.settings, s.device);
  s.context = std::make_unique<RunContext>(RunContext{s.options, s.workload->info(), *s.workload, s.device, nullptr});
  if (s.group) {
    join_data_parallel(s);
    s.context->gradient_reducer = s.reducer.get();
    s.context->sharded = s.sharded.get();
    s.context->model_collectives = s.workload->model_collectives();
  }
  std::vector<PhaseListener*> listeners(s.analysis_probes.begin(), s.analysis_probes.end());
  s.phases = std::make_unique<Phases>(s.device, autocast_type(s.options.precision));
  s.instrumented_phases = std::make_unique<Phases>(s.device, autocast_type(s.options.precision), listeners);
  if (s.options.precision == Precision::fp16)  // fp16 needs loss scaling; bf16 does not
    s.scaler = std::make_unique<GradScaler>(s.workload->state().weights);
  for (Phases* ph : {s.phases.get(), s.instrumented_phases.get()}) {
    ph->set_gradient_sync(s.sharded ? static_cast<GradientSync*>(s.sharded.get()) : s.reducer.get());
    ph->set_grad_scaler(s.scaler.get());
  }
  if (s.cuda_graphs.use) s.graph_step = std::make_unique<CudaGraphStep>(s.device);
  for (auto& p : s.probes) p->on_run_start(*s.context);
}

// Step 2: until the fixed count, or (auto) until iteration times settle;
// where the workload declares several batch shapes
// (Workload::distinct_batch_shapes), also until every one has run once, for
// at most 8 iterations per shape: a pool hands its shapes out in turn (one
// pass), a shuffled stream needs about K·ln K draws to meet K shapes. A
// workload of one shape warms up exactly as asked (--warmup 0: none).
void warm_up(Session& s, Progress& progress) {
  const auto t0 = Clock::now();
  std::deque<double> recent;
  const int64_t cap = s.options.warmup_auto ? 50 : s.options.warmup;
  s.warmup.shapes_declared = s.workload->distinct_batch_shapes();
  // Ranks may declare different counts (each its own shard or pool): the
  // most any declares decides for all, and all warm up as long as any has a
  // declared shape it has not run.
  const int64_t most_declared = s.agreed(static_cast<int>(s.warmup.shapes_declared));
  // A graphed step warms up until it has been captured, so no timed window holds the capture.
  const int64_t graph_iterations = s.graph_step ? CudaGraphStep::kEagerIterations + 1 : 0;
  const int64_t shape_cap = std::max({cap, 8 * most_declared, graph_iterations});
  const auto shapes_unseen = [&s, most_declared] {
    return most_declared >= 2 &&
           s.agreed(static_cast<int64_t>(s.shapes.warmup.size()) < s.warmup.shapes_declared ? 1 : 0) > 0;
  };
  const auto uncaptured = [&s] { return s.graph_step && !s.graph_step->captured(); };
  bool settled_now = false, for_shapes = false, for_graph = false;
  while (true) {
    const bool counted = settled_now || s.warmup.iterations >= cap;  // what --warmup alone asks is done
    const bool unseen = counted && shapes_unseen();
    if (counted && !unseen && !uncaptured()) break;
    if (s.warmup.iterations >= shape_cap) {
      s.warmup.shapes_cap = true;
      break;
    }
    if (s.agreed(interrupt_requested() ? 1 : 0) > 0) {
      s.partial = true;
      break;
    }
    for_shapes = unseen;             // this iteration runs only to meet a shape ...
    for_graph = counted && !unseen;  // ... or to capture the step
    progress.show("warm-up", s.warmup.iterations + 1, s.options.warmup_auto ? 0 : cap);
    const auto r = run_iteration(s, s.timed_probes, *s.phases, -1, s.warmup.iterations, false, "warm-up");
    ++s.warmup.iterations;
    recent.push_back(r.seconds);
    if (s.options.warmup_auto && !settled_now) settled_now = s.agreed(settled(recent) ? 1 : 0) > 0;
  }
  if (s.options.warmup_auto) s.warmup.ended_by = settled_now ? "settled" : s.partial ? "interrupted" : "cap";
  if (for_shapes && !s.partial) s.warmup.ended_by = "shapes";
  if (for_graph && !s.partial) s.warmup.ended_by = "cuda graph";
  s.warmup.seconds = seconds_since(t0);
}

// Step 3: the repetitions of the timed window. Only the step and the timed
// probes run here; the machine's conditions are read before and after.
void timed_windows(Session& s, Progress& progress) {
  s.conditions_start = take_condition_snapshot();
  for (int rep = 0; rep < s.options.repeat && !s.partial; ++rep) {
    if (rep == 0) s.workload->begin_measurement();
    for (auto* p : s.timed_probes) p->on_window_begin(rep);
    s.wall_clock.windows.emplace_back(unix_time_ms(), 0);  // outside the timed iterations
    double window_s = 0;  // timed iteration time of this window: what throughput divides by
    for (int64_t i = 0;; ++i) {
      // Elapsed time and Ctrl-C differ between ranks: agree (0 go on,
      // 1 done, 2 interrupted), so no rank is left alone in an all-reduce.
      const bool done = i >= s.options.iters && window_s >= s.options.min_time;
      const int verdict = s.agreed(interrupt_requested() ? 2 : done ? 1 : 0);
      if (verdict == 2) s.partial = true;
      if (verdict > 0) break;
      progress.show(s.options.repeat > 1 ? "timing (repetition)" : "timing", i + 1,
                    s.options.min_time > 0 ? 0 : s.options.iters);
      const auto r = run_iteration(s, s.timed_probes, *s.phases, rep, i, true, "timed");
      if (std::isnan(s.first_loss)) s.first_loss = r.loss;
      s.last_loss = r.loss;
      ++s.timed.iterations;
      s.timed.samples += static_cast<double>(r.samples);
      s.timed.seconds += r.seconds;
      window_s += r.seconds;
    }
    s.wall_clock.windows.back().second = unix_time_ms();
    for (auto* p : s.timed_probes) p->on_window_end(rep);
  }
  s.conditions_end = take_condition_snapshot();
  s.workload_metrics = s.workload->measurement();
}

// Step 4: the analysis probes' iterations, continuing the same batch stream
// (so variable-shape workloads see batches like the timed ones).
void instrumented_pass(Session& s, Progress& progress) {
  for (auto* p : s.analysis_probes) p->on_timed_figures(s.timed);
  if (s.analysis_probes.empty() || s.partial) return;
  const int64_t count = s.options.instrument_iters > 0 ? s.options.instrument_iters
                                                       : std::min<int64_t>(5, std::max<int64_t>(1, s.timed.iterations));
  for (auto* p : s.analysis_probes) p->on_window_begin(0);
  for (int64_t i = 0; i < count; ++i) {
    if (s.agreed(interrupt_requested() ? 1 : 0) > 0) break;  // the timed figures stand; analysis is cut short
    progress.show("instrumented", i + 1, count);
    run_iteration(s, s.analysis_probes, *s.instrumented_phases, -1, i, true, "instrumented");
    ++s.instrumented_iterations;
  }
  for (auto* p : s.analysis_probes) p->on_window_end(0);
}

// Iterations profiled for the kernel view when no --trace asks for more.
constexpr int kKernelProfileIterations = 3;

struct Profile {
  nlohmann::json saved;      // the trace file's description (null without a path)
  nlohmann::json execution;  // the execution trace's description (null without a path)
  nlohmann::json kernels;    // summarize_kernels() of the device's activity
};

// `iterations` more iterations under the Kineto profiler; no probe watches them.
Profile profile_iterations(Session& s, const std::string& path, int iterations,
                           const std::string& execution_trace_path = "") {
  Profile p;
  // Like the trace, the execution trace is an extra whose loss must not cost the result.
  const auto lost_execution_trace = [&](const Error& e) {
    p.execution = {{"file", nullptr}, {"requested_file", execution_trace_path}, {"error", e.what()}};
  };
  std::optional<ExecutionTraceRecorder> execution;
  if (!execution_trace_path.empty()) {
    try {
      execution.emplace(execution_trace_path);
    } catch (const Error& e) {
      lost_execution_trace(e);
    }
  }
  TraceRecorder recorder(path, s.device);
  recorder.set_distributed_info({{"backend", s.group ? s.group->backend_name() : "none"},
                                 {"rank", s.options.rank},
                                 {"world_size", s.options.world_size},
                                 {"pg_count", s.group ? 1 : 0}});
  synchronize(s.device);
  recorder.start();
  if (execution) execution->start();  // inside Kineto's window: its nodes' rf_id link to the Kineto ops
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    // Each iteration in a ProfilerStep#N range, as torch.profiler's step()
    // marks them: HTA and TensorBoard split the trace into iterations by it.
    RECORD_USER_SCOPE(profiler_step_name(i));
    run_iteration(s, {}, *s.phases, -1, i, false, "profiled");
  }
  synchronize(s.device);
  const double wall_s = seconds_since(t0);
  if (execution) {
    try {
      p.execution = execution->stop_and_save();
    } catch (const Error& e) {
      lost_execution_trace(e);
    }
  }
  try {
    p.saved = recorder.stop_and_save();
  } catch (const std::exception& e) {
    if (path.empty()) throw;  // only the kernel view wanted it: profile_pass decides
    // The trace is an extra: its loss must not cost the measured result.
    p.saved = {{"file", nullptr}, {"requested_file", path}, {"error", error_message(e)}};
  }
  p.kernels = summarize_kernels(recorder.device_activities(), wall_s, iterations);
  return p;
}

// Step 5: Kineto-profiled iterations for --trace and for probes that want the
// kernel view (Kineto's overhead stays out of every statistic).
void profile_pass(Session& s, const TraceRequest& trace) {
  if (s.partial) return;
  std::vector<Probe*> wanting;
  for (auto& p : s.probes)
    if (p->wants_kernel_profile(*s.context)) wanting.push_back(p.get());
  if (!trace.path.empty() || !trace.execution_trace.empty()) {
    // A data-parallel run writes one file per rank into the folder given.
    const auto file_for_rank = [&](const std::string& path) {
      const std::string file = trace_file_for_rank(path, s.options.rank, s.options.world_size);
      std::error_code ec;
      if (file != path) std::filesystem::create_directories(path, ec);
      return file;
    };
    const std::string file = file_for_rank(trace.path);
    const std::string execution_file = file_for_rank(trace.execution_trace);
    const auto profile = profile_iterations(s, file, trace.iterations, execution_file);
    const auto describe = [&](nlohmann::json saved, const std::string& path, const std::string& file) {
      if (file != path) saved["per_rank_folder"] = path;
      saved["iterations"] = trace.iterations;
      saved["note"] = "iterations run after the timed windows, not part of any statistic";
      return saved;
    };
    if (!trace.path.empty()) s.trace = describe(profile.saved, trace.path, file);
    if (!trace.execution_trace.empty())
      s.execution_trace = describe(profile.execution, trace.execution_trace, execution_file);
    for (auto* p : wanting) p->on_kernel_profile(profile.kernels);
    return;
  }
  if (wanting.empty()) return;
  // Only the kernel view asked for it: a profiler that cannot start (no
  // CUPTI, say) costs the view, not the run.
  nlohmann::json kernels;
  try {
    kernels = profile_iterations(s, "", kKernelProfileIterations).kernels;
  } catch (const Error&) {
    throw;  // the iteration itself failed (a diverged loss): as in any iteration
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const std::exception& e) {
    kernels = {{"kernel_busy_share", nullptr},
               {"not_available", std::string("the Kineto profiler failed: ") + error_message(e)}};
  }
  for (auto* p : wanting) p->on_kernel_profile(kernels);
}

// Every rank's timed throughput, gathered on rank 0.
void gather_distributed(Session& s) {
  const nlohmann::json mine = {{"rank", s.options.rank},
                               {"samples", s.timed.samples},
                               {"seconds", s.timed.seconds},
                               {"samples_per_s", s.timed.samples_per_s()}};
  const auto all = s.group->gather_text("throughput", mine.dump());
  if (s.options.rank != 0) return;
  nlohmann::json per_rank = nlohmann::json::array();
  double global = 0;
  for (const auto& text : all) {
    per_rank.push_back(nlohmann::json::parse(text));
    global += per_rank.back()["samples_per_s"].get<double>();
  }
  s.distributed = {{"world_size", s.options.world_size},
                   {"backend", s.group->backend_name()},
                   {"global_batch_size", s.options.global_batch()},
                   {"per_rank", per_rank},
                   {"global_samples_per_s", global},
                   {"overlap", s.options.dist_overlap},
                   {"bucket_mb", s.options.bucket_mb},
                   {"gradient_buckets", s.reducer ? s.reducer->bucket_count() : 0},
                   {"sharding", s.sharded ? s.sharded->describe(s.workload->state().optimizer_state)
                                          : nlohmann::json{{"strategy", "none"}}}};
}

RunOutcome run_session(Session& s, const RunOptions& requested, const std::vector<std::string>& probes,
                       const TraceRequest& trace) {
  s.wall_clock.start = unix_time_ms();
  configure_session(s, requested, probes);
  Progress progress(!s.options.quiet && s.options.rank == 0);
  try {
    open_session(s);
    s.wall_clock.setup_end = unix_time_ms();
    warm_up(s, progress);
    s.wall_clock.warmup_end = unix_time_ms();
    timed_windows(s, progress);
    instrumented_pass(s, progress);
    profile_pass(s, trace);
    for (auto& p : s.probes) p->on_run_end(*s.context);
    s.wall_clock.end = unix_time_ms();
    if (s.group) gather_distributed(s);
  } catch (...) {
    progress.clear();
    rethrow_as_run_error(s.options);
  }
  progress.clear();
  return assemble_result(s, trace);
}

}  // namespace

void check_data_parallel_supported(const WorkloadInfo& workload, int processes) {
  if (processes <= 1) return;
  refuse_data_parallel(workload, processes);
}

void check_grad_accum_supported(const WorkloadInfo& workload, int64_t grad_accum) {
  if (grad_accum <= 1 || workload.grad_accum_refusal.empty()) return;
  throw UsageError(workload.name + " does not accumulate gradients (--grad-accum " + std::to_string(grad_accum) +
                   "): " + workload.grad_accum_refusal);
}

bool cudnn_autotuning_for(const c10::Device& device, const WorkloadInfo& info) {
  return device.is_cuda() && !info.variable_shapes;
}

RunOutcome run_benchmark(const RunOptions& requested, Workload& workload, const std::vector<std::string>& probes,
                         const TraceRequest& trace) {
  Session s;
  s.workload = &workload;
  return run_session(s, requested, probes, trace);
}

}  // namespace tbd
