#include "tbd/study/predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <ATen/Parallel.h>

#include "tbd/core/error.h"
#include "tbd/core/host_allocator.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/number_text.h"
#include "tbd/core/run_option_table.h"
#include "tbd/core/statistics.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/dist/process_group.h"
#include "tbd/measure/machine/ceilings.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/measure/runner.h"
#include "tbd/output/result_file.h"
#include "tbd/predict/bucket_allreduce.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/embedding_exchange.h"
#include "tbd/predict/memory_model.h"
#include "tbd/predict/op_speedup_model.h"
#include "tbd/predict/sharded_memory_model.h"
#include "tbd/predict/sharded_step.h"
#include "tbd/report/prediction_text.h"
#include "tbd/report/result_set.h"
#include "tbd/study/child_run.h"
#include "tbd/study/folder_lock.h"
#include "tbd/study/sweep.h"
#include "tbd/workloads/registry.h"

namespace tbd {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_json_document(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The base result, checked by its reader (load_results), and the figures
// every prediction scales from; a problem is the file's, so it is named.
nlohmann::json read_base(const std::string& path) {
  const ResultSet set = load_results(path);
  if (set.runs.size() != 1 || !set.runs.front().origin.empty())
    throw UsageError("tbd predict takes one result file written by `tbd run --out`; " + path + " holds " +
                     std::to_string(set.runs.size()) + " results");
  const nlohmann::json& base = set.runs.front().result;
  if (!base["throughput"].contains("samples_per_s") || !base["throughput"]["samples_per_s"].is_number())
    throw Error(path +
                ": the base has no measured throughput ('throughput.samples_per_s'); predict from a result "
                "whose timed iterations completed");
  if (!base.contains("summary") || !base["summary"].is_object() || !base["summary"].contains("mean_s") ||
      !base["summary"]["mean_s"].is_number())
    throw Error(path +
                ": the base has no mean iteration time ('summary.mean_s'); predict from a result written by "
                "`tbd run --out`");
  return base;
}

// The base's configuration, read through the option table, so a copy or a
// check runs exactly what the base ran. A value the table cannot read, or a
// workload this tbd does not know, is the base file's problem: it is named.
RunOptions configuration_of(const nlohmann::json& base, const std::string& path) {
  RunOptions options;
  try {
    options = run_options_from_json(base.at("workload").at("options"));
    options.workload = base["workload"]["name"].get<std::string>();
    create_workload(options.workload);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return options;
}

// `tbd run` with the base's configuration, then `extra`.
std::vector<std::string> run_arguments(const std::string& program, const RunOptions& options,
                                       const std::vector<std::string>& extra) {
  std::vector<std::string> args = {program, "run", options.workload};
  const auto configuration = configuration_arguments(options);
  args.insert(args.end(), configuration.begin(), configuration.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void check_request(const PredictRequest& r) {
  if ((!r.sharding.empty() || r.device_memory_bytes > 0) && r.nproc == 0)
    throw UsageError(
        "--sharding and --device-memory predict the memory per rank of a data-parallel run: give "
        "--nproc N too");
  if (r.nproc == 0 && r.speedups.empty() && !r.roofline && r.memory_limit_bytes == 0)
    throw UsageError("nothing to predict: give --nproc N, --faster CLASS=K, --roofline or --memory-limit SIZE");
  if (r.nproc < 0 || r.nproc == 1)
    throw UsageError("--nproc must be at least 2 (the base is the single-process run), got " + std::to_string(r.nproc));
  if (!(r.bucket_mb > 0)) throw UsageError("--bucket-mb must be positive");
  if (r.runs < 1) throw UsageError("--runs must be at least 1");
  if (!std::isfinite(r.bus_gbps) || r.bus_gbps < 0 || !std::isfinite(r.latency_us) || r.latency_us < 0)
    throw UsageError("--bus-gbps and --latency-us must be finite numbers, not negative");
  if (r.embedding_sharding != EmbeddingSharding::replicate) {
    if (r.nproc < 2)
      throw UsageError("--embedding-sharding predicts the tables placed across ranks: give --nproc N (at least 2)");
    if (r.device_memory_bytes > 0)
      throw UsageError(
          "--device-memory predicts ZeRO's memory per rank, not placed tables: plan each rank's with tbd plan dlrm "
          "--nproc N --embedding-sharding P --device-memory SIZE");
    if (!r.sharding.empty() && r.sharding != "none")
      throw UsageError(
          "--embedding-sharding and --sharding do not combine: dlrm's tables are placed, not cut "
          "into ZeRO's slices");
  }
  if (!r.out.empty()) check_output_path(r.out);
}

// --sharding's strategy (none when not given).
Sharding sharding_of(const PredictRequest& request) {
  return request.sharding.empty() ? Sharding::none : parse_sharding(request.sharding);
}

// SIGINT or SIGTERM stops the measurements: what is left is not started
// (the signal is forwarded to a child already running: child_run.h), and
// the command exits 130 or 143 without a prediction file.
void stop_if_interrupted(const std::string& before) {
  if (interrupt_requested())
    throw Error(std::string("stopped by ") + signal_name(interrupt_signal()) + " before " + before +
                "; no prediction written");
}

// The all-reduce of each bucket size among `request.nproc` local workers of
// this command (run_predict_worker in each).
nlohmann::json measure_allreduces_locally(const PredictRequest& request, const std::string& dir) {
  const std::string file = (fs::path(dir) / fmt::format("allreduce-{}-ranks.json", request.nproc)).string();
  std::vector<std::string> args = request.command;
  args.insert(args.end(), {"--calibrate-into", file});
  const int status = run_local_workers(args, request.nproc);
  if (status != 0)
    throw Error(fmt::format("measuring the all-reduce among {} local ranks failed (exit {})", request.nproc, status));
  return read_json_document(file);
}

// Each rank's step when `ranks` copies of the base run at once on this host
// (no communication), `rounds` times: the copies' mean phases, and the mean
// over rounds of what the slowest copy adds to each iteration.
struct CoLocated {
  nlohmann::json phases = nlohmann::json::object();
  double straggle_s = 0;
  std::vector<std::string> files;
};

CoLocated measure_co_located(const std::string& program, const RunOptions& base, int ranks, int rounds,
                             const std::string& dir) {
  CoLocated out;
  for (int round = 0; round < rounds; ++round) {
    std::vector<ChildOutcome> outcomes(static_cast<size_t>(ranks));
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> files, logs;
    for (int i = 0; i < ranks; ++i) {
      const std::string name = fmt::format("co-located-{}-of-{}{}", i, ranks,
                                           rounds > 1 ? fmt::format("-round-{}", round + 1) : std::string());
      files.push_back((fs::path(dir) / (name + ".json")).string());
      logs.push_back((fs::path(dir) / (name + ".log")).string());
      // Ranks draw their data from streams seeded by rank (variable-length
      // workloads meet different lengths at the same step): copy i draws
      // rank i's, so iteration k of the copies sees what iteration k of the
      // ranks will.
      commands.push_back(run_arguments(
          program, base,
          {"--data-stream-rank", std::to_string(i), "--probes", "time", "--out", files.back(), "--quiet"}));
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < ranks; ++i) threads.emplace_back([&, i] { outcomes[i] = run_child(commands[i], logs[i]); });
    for (auto& t : threads) t.join();
    std::vector<std::vector<double>> iterations;
    for (int i = 0; i < ranks; ++i) {
      if (!outcomes[i].ok())
        throw Error("a co-located copy of the base failed: " + outcomes[i].error + " (" + command_line(commands[i]) +
                    ")");
      const nlohmann::json r = read_json_document(files[i]);
      for (const auto& [k, v] : r.at("phases").items())
        if (v.is_number()) out.phases[k] = out.phases.value(k, 0.0) + v.get<double>() / (ranks * rounds);
      iterations.push_back(r.at("iterations").get<std::vector<double>>());
      out.files.push_back(files[i]);
    }
    out.straggle_s += aligned_straggle(iterations) / rounds;
  }
  return out;
}

double relative_error(double predicted, double measured) { return predicted / measured - 1; }

// The predicted configuration run `runs` times (processes are the unit of
// run-to-run noise); the error is against their mean.
nlohmann::json check_data_parallel(const PredictRequest& request, const RunOptions& base,
                                   const nlohmann::json& prediction, const std::string& dir) {
  std::vector<double> rates;
  nlohmann::json files = nlohmann::json::array(), phases, comm, cv;
  std::string command;
  const int ranks = request.nproc;
  for (int i = 0; i < request.runs; ++i) {
    const std::string sharded = (request.sharding.empty() ? "" : "-sharding-" + request.sharding) +
                                (request.embedding_sharding == EmbeddingSharding::replicate
                                     ? ""
                                     : std::string("-embedding-sharding-") + to_string(request.embedding_sharding));
    const std::string name = request.runs == 1 ? fmt::format("nproc-{}{}", ranks, sharded)
                                               : fmt::format("nproc-{}{}-run-{}", ranks, sharded, i + 1);
    const std::string file = (fs::path(dir) / (name + ".json")).string();
    const std::string log = (fs::path(dir) / (name + ".log")).string();
    std::vector<std::string> extra = {
        "--nproc",        std::to_string(ranks),          "--bucket-mb", fmt::format("{}", request.bucket_mb),
        "--dist-overlap", request.overlap ? "on" : "off", "--out",       file,
        "--quiet"};
    if (!request.sharding.empty()) extra.insert(extra.end(), {"--sharding", request.sharding});
    if (request.embedding_sharding != EmbeddingSharding::replicate)
      extra.insert(extra.end(), {"--embedding-sharding", to_string(request.embedding_sharding)});
    const std::vector<std::string> args = run_arguments(request.program, base, extra);
    stop_if_interrupted("the check run " + file);
    const ChildOutcome run = run_child(args, log);
    if (!run.ok()) throw Error("the check run failed: " + run.error + " (log: " + log + ")");
    const nlohmann::json measured = read_json_document(file);
    rates.push_back(throughput_of(measured));
    files.push_back(file);
    command = command_line(args);
    phases = measured.value("phases", nlohmann::json());  // the last run's, to compare term by term
    comm = measured.value("comm", nlohmann::json());
    cv = measured.at("throughput").value("repetition_cv", nlohmann::json());
  }
  const double mean = mean_of(rates);
  const double predicted = prediction["global_samples_per_s"].get<double>();
  return {{"command", command},
          {"result", files.back()},
          {"runs", files},
          {"measured_runs_samples_per_s", rates},
          {"measured_global_samples_per_s", mean},
          // The last run's own noise: the CV of its repetitions (rank 0's).
          {"measured_repetition_cv", cv},
          {"measured_phases", phases},
          {"measured_comm", comm},
          {"error", relative_error(predicted, mean)},
          {"measured_process_cv", rates.size() > 1 ? nlohmann::json(stddev_of(rates) / mean) : nlohmann::json()}};
}

// The sharded run `tbd run --nproc N --sharding S`: its rank 0's memory
// peak and model state against the prediction's. `ran`: a check run of the
// throughput prediction (it has the memory probe), read instead of running
// one more; null: run it here.
nlohmann::json check_sharded_memory(const PredictRequest& request, const RunOptions& base,
                                    const nlohmann::json& prediction, const std::string& dir,
                                    const nlohmann::json& ran) {
  std::string file, command;
  if (ran.is_object()) {
    file = ran.at("runs").at(0).get<std::string>();
    command = ran.at("command").get<std::string>();
  } else {
    const std::string sharding = to_string(sharding_of(request));
    const std::string name = fmt::format("nproc-{}-sharding-{}", request.nproc, sharding);
    file = (fs::path(dir) / (name + ".json")).string();
    const std::string log = (fs::path(dir) / (name + ".log")).string();
    const std::vector<std::string> args =
        run_arguments(request.program, base,
                      {"--nproc", std::to_string(request.nproc), "--sharding", sharding, "--bucket-mb",
                       fmt::format("{}", request.bucket_mb), "--probes", "time,memory", "--out", file, "--quiet"});
    stop_if_interrupted("the check run " + file);
    const ChildOutcome run = run_child(args, log);
    if (!run.ok()) throw Error("the check run failed: " + run.error + " (log: " + log + ")");
    command = command_line(args);
  }
  const nlohmann::json measured = read_json_document(file);
  const auto& memory = measured.value("memory", nlohmann::json());
  if (!memory.is_object() || !memory.value("peak_bytes", nlohmann::json()).is_number())
    throw Error("the check run measured no memory peak (" + file + ")");
  const double peak = memory["peak_bytes"].get<double>();
  nlohmann::json out = {{"command", command},
                        {"result", file},
                        {"measured_peak_bytes_per_rank", peak},
                        {"peak_error", relative_error(prediction["peak_bytes_per_rank"].get<double>(), peak)},
                        {"measured_global_samples_per_s", measured.at("distributed").at("global_samples_per_s")}};
  const auto& held = measured.at("distributed")
                         .value("sharding", nlohmann::json())
                         .value("model_state_bytes_per_rank", nlohmann::json());
  if (held.is_object()) {
    out["measured_model_state_bytes_per_rank"] = held;
    out["model_state_error"] =
        relative_error(prediction["model_state_bytes_per_rank"]["total"].get<double>(), held["total"].get<double>());
  } else {
    out["measured_model_state_bytes_per_rank"] = nullptr;  // --sharding none records no layout
    out["model_state_error"] = nullptr;
  }
  return out;
}

// The sweep `tbd sweep --batch-sizes auto --memory-limit LIMIT` of the
// base's configuration, run here; its table goes to DIR/sweep.log.
nlohmann::json check_memory(const PredictRequest& request, const RunOptions& base, const nlohmann::json& prediction,
                            const std::string& dir) {
  RunOptions options = base;
  options.batch_size = 0;  // the sweep's to choose
  SweepRequest sweep;
  sweep.workload = base.workload;
  sweep.plan.automatic = true;
  sweep.memory_limit_bytes = request.memory_limit_bytes;
  sweep.run.options = options;
  sweep.run.tokens = configuration_arguments(options);
  sweep.run.probes = default_probes();
  sweep.out = (fs::path(dir) / "sweep").string();
  sweep.program = request.program;
  std::vector<std::string> command = {request.program, "sweep", base.workload};
  command.insert(command.end(), sweep.run.tokens.begin(), sweep.run.tokens.end());
  command.insert(command.end(), {"--batch-sizes", "auto", "--memory-limit", std::to_string(request.memory_limit_bytes),
                                 "--out", sweep.out});
  sweep.command = command_line(command);
  std::ofstream log(fs::path(dir) / "sweep.log");
  stop_if_interrupted("the check sweep");
  const nlohmann::json points = run_sweep(sweep, log).document.at("points");
  long long first_oom = 0;
  for (const auto& p : points)
    if (p.value("status", std::string()) == "out_of_memory") first_oom = p["batch_size"].get<long long>();
  const std::string index = (fs::path(sweep.out) / "sweep.json").string();
  nlohmann::json out = {
      {"command", sweep.command}, {"sweep", index}, {"measured_largest_fitting_batch", largest_fitting_batch(points)}};
  const auto& predicted = prediction["first_out_of_memory_doubling"];
  if (first_oom > 0 && predicted.is_number()) {
    out["measured_first_out_of_memory_batch"] = first_oom;
    // Doubling steps between the predicted and the measured first batch that does not fit.
    out["doubling_steps_off"] = std::log2(static_cast<double>(predicted.get<long long>()) / first_oom);
  } else {
    out["measured_first_out_of_memory_batch"] = nullptr;
    out["doubling_steps_off"] = nullptr;
  }
  return out;
}

// The plan's collective times from those measured among local ranks: every
// size the step uses was measured; a missing one must not pass for free.
void use_measured_collectives(DataParallelPlan& plan, const nlohmann::json& figures) {
  if (plan.sharding == Sharding::none) {
    std::map<double, double> measured;
    for (const auto& m : figures.at("allreduce")) measured[m["bytes"].get<double>()] = m["seconds"].get<double>();
    plan.allreduce_seconds = [measured](double bytes) {
      const auto it = measured.find(bytes);
      if (it == measured.end()) throw Error(fmt::format("no all-reduce was measured for {} bytes", bytes));
      return it->second;
    };
    const nlohmann::json& in_context = figures.at("in_context");
    if (in_context["sparse_back_to_back_seconds"].is_number())
      plan.sparse_allreduce_seconds = in_context["sparse_back_to_back_seconds"].get<double>();
  } else {
    std::map<std::pair<std::string, double>, double> measured;
    for (const auto& m : figures.at("collectives"))
      measured[{m.at("kind").get<std::string>(), m.at("bytes").get<double>()}] = m.at("seconds").get<double>();
    plan.collective_seconds = [measured](const StepCollective& c) {
      const auto it = measured.find({to_string(c.kind), c.bytes});
      if (it == measured.end()) throw Error(fmt::format("no {} was measured for {} bytes", to_string(c.kind), c.bytes));
      return it->second;
    };
  }
  plan.communication_in_context_s = figures.at("in_context").at("seconds").get<double>();
  plan.allreduce_source = fmt::format(
      "{} among {} local ranks: {} timed alone (the replay), the whole communication measured in context (the "
      "iteration's term)",
      figures.at("backend").get<std::string>(), figures.at("ranks").get<int>(),
      plan.sharding == Sharding::none ? "each bucket size's all-reduce"
                                      : "each collective of the step (kind and size)");
}

nlohmann::json predict_ranks(const PredictRequest& request, const nlohmann::json& base, const RunOptions& options,
                             const std::string& dir) {
  DataParallelPlan plan;
  plan.ranks = request.nproc;
  plan.overlap = request.overlap;
  plan.bucket_mb = request.bucket_mb;
  plan.sharding = sharding_of(request);
  plan.embedding_sharding = request.embedding_sharding;
  const bool placed = plan.embedding_sharding != EmbeddingSharding::replicate;
  // Fails now, before any worker starts, for a base without tables.
  const auto exchanges =
      placed ? embedding_exchanges(base, plan.embedding_sharding, plan.ranks) : std::vector<EmbeddingExchange>{};
  for (const auto& e : exchanges) plan.embedding_exchange_bytes += e.bytes;
  replayable_phases(base);              // fails now, before any worker starts, without phases or a timeline
  if (plan.sharding != Sharding::none)  // fails now without what the sharded step needs
    sharded_step(
        base, replayable_phases(base),
        {.ranks = plan.ranks, .sharding = plan.sharding, .bucket_mb = plan.bucket_mb, .overlap = plan.overlap});
  nlohmann::json figures;
  if (request.bus_gbps > 0) {
    const double bus = request.bus_gbps * 1e9, latency = request.latency_us * 1e-6;
    const int n = request.nproc;
    plan.allreduce_seconds = [bus, latency, n](double bytes) { return ring_allreduce_seconds(bytes, n, bus, latency); };
    plan.collective_seconds = [bus, latency, n](const StepCollective& c) {
      return ring_collective_seconds(c, n, bus, latency);
    };
    plan.sparse_allreduce_seconds =
        placed ? 0 : ring_sparse_allreduce_seconds(sparse_gradients_of(base), n, bus, latency);
    // An all-to-all sends (n−1)/n of its buffer over the bus.
    for (const auto& e : exchanges) plan.embedding_placement_s += e.bytes * (n - 1.0) / n / bus + latency;
    if (placed)
      plan.embedding_placement_source =
          "the lookups' all-to-alls (lengths, ids, pooled rows, their gradients): their bytes over the given bus "
          "bandwidth, plus latency";
    plan.allreduce_source = fmt::format(
        "ring model, bus bandwidth {:g} GB/s, latency {:g} µs (given); "
        "one device per rank",
        request.bus_gbps, request.latency_us);
  } else {
    check_local_ranks_fit(request.nproc, options.device == "cpu");
    create_results_folder(dir, "--dir");
    stop_if_interrupted("measuring the collectives among local ranks");
    figures = measure_allreduces_locally(request, dir);
    use_measured_collectives(plan, figures);
    if (placed) {
      // What placing the tables changes in the lookups: their time placed
      // (pooling, all-to-alls and the waits at them) over the same bags'
      // from whole tables; the co-located copies ran the latter.
      const auto& m = figures.at("placed_lookups");
      const double placed_s = m.at("placed_s").get<double>(), whole_s = m.at("replicated_s").get<double>();
      plan.embedding_placement_s = placed_s - whole_s;
      plan.embedding_placement_source = fmt::format(
          "the lookups placed {}-wise among {} local ranks (pooling, {} all-to-alls and the waits at them, "
          "forward and backward: {:.3g} ms) less the same bags pooled from whole tables ({:.3g} ms), rank 0's "
          "medians of 11",
          to_string(plan.embedding_sharding), request.nproc, exchanges.size(), 1e3 * placed_s, 1e3 * whole_s);
    }
    stop_if_interrupted("running the co-located copies of the base");
    const CoLocated co = measure_co_located(request.program, options, request.nproc, request.runs, dir);
    plan.rank_phases = co.phases;
    plan.straggle_s = co.straggle_s;
    plan.rank_phases_source = fmt::format(
        "measured: {} copies of the base running at once on this host, "
        "without communication, {} time(s) ({})",
        request.nproc, request.runs, fmt::join(co.files, ", "));
    const auto bw = ceilings_for_run(c10::Device(options.device), options.threads, to_string(options.precision))
                        .value("memory_bandwidth", nlohmann::json::object());
    if (bw.contains("bytes_per_s") && bw["bytes_per_s"].is_number()) plan.copy_bytes_per_s = bw["bytes_per_s"];
  }
  nlohmann::json p = predict_data_parallel(base, plan);
  if (!figures.is_null()) p["measured_here"] = figures;
  if (request.check) {
    if (request.bus_gbps > 0)
      p["check"] = {{"not_available",
                     "the prediction is for ranks with their own devices at the given "
                     "bandwidth; this machine cannot run that"}};
    else
      p["check"] = check_data_parallel(request, options, p, dir);
  }
  return p;
}

}  // namespace

std::map<std::string, double> parse_speedups(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    const auto k = eq == std::string::npos ? std::nullopt : real_from_text(item.substr(eq + 1));
    if (eq == std::string::npos || eq == 0 || !k || !(*k > 0) || !std::isfinite(*k))
      throw UsageError("--faster takes CLASS=FACTOR with a positive factor, e.g. --faster conv=2; got '" + item + "'");
    out[item.substr(0, eq)] = *k;
  }
  return out;
}

int run_predict_worker(const PredictRequest& request, const std::string& into) {
  const nlohmann::json base = read_base(request.base);
  const RunOptions options = configuration_of(base, request.base);
  const c10::Device device(options.device);
  // As each rank of the run: the stand-in computation's threads, and the
  // host allocator's treatment of freed memory (the placed lookups' sparse
  // gradients are megabytes a pass).
  if (options.threads > 0) at::set_num_threads(options.threads);
  apply_host_allocator(options.host_allocator);
  auto group = ProcessGroup::connect(read_dist_environment(), device, std::chrono::seconds(120));
  const nlohmann::json phases = replayable_phases(base);
  const Sharding sharding = sharding_of(request);
  const bool placed = request.embedding_sharding != EmbeddingSharding::replicate;
  // Placed tables keep their gradients on their rank: no sparse all-reduce.
  nlohmann::json figures =
      sharding == Sharding::none
          ? measure_bucket_allreduces(*group, device, step_schedule(base, phases, request.bucket_mb, request.overlap),
                                      placed ? std::vector<SparseGradient>{} : sparse_gradients_of(base))
          : measure_sharded_collectives(*group, device,
                                        sharded_step(base, phases,
                                                     {.ranks = group->size(),
                                                      .sharding = sharding,
                                                      .bucket_mb = request.bucket_mb,
                                                      .overlap = request.overlap}));
  if (placed) {
    // Every rank takes part.
    const nlohmann::json timed =
        measure_placed_lookups(*group, device, embedding_lookups(base), request.embedding_sharding);
    if (group->rank() == 0) figures["placed_lookups"] = timed;
  }
  if (group->rank() == 0) write_json_atomically(into, figures);
  return 0;
}

StudyOutcome run_predict(const PredictRequest& request, std::ostream& human) {
  check_request(request);
  const nlohmann::json base = read_base(request.base);
  const RunOptions options = configuration_of(base, request.base);
  const std::string& workload = options.workload;
  const Sharding sharding = sharding_of(request);
  if (request.nproc > 1) {
    const WorkloadInfo info = create_workload(workload)->info();
    check_data_parallel_supported(info, request.nproc);
    RunOptions sharded = options;
    sharded.sharding = sharding;
    sharded.embedding_sharding = request.embedding_sharding;
    check_sharding_supported(info, sharded, /*ranks_available=*/true);
    check_embedding_sharding_supported(info, sharded, /*ranks_available=*/true);
    // Data-parallel runs stay eager (docs/gpu.md#cuda-graphs): a graphed
    // base's step is not the one its ranks would take.
    if (replayed_cuda_graph(base))
      throw UsageError(request.base +
                       ": the base replayed its step as a CUDA graph (--cuda-graphs), which data-parallel runs do "
                       "not, so its step is not their ranks' step; predict --nproc from a base run with "
                       "--cuda-graphs off");
  }
  const std::string dir = request.dir.empty() ? "predict-" + workload : request.dir;
  if (request.check) create_results_folder(dir, "--dir");

  nlohmann::json predictions = nlohmann::json::array();
  // The throughput of N ranks (replicated or sharded), then the memory per
  // rank of a sharded run, whose check reads the throughput check's run.
  nlohmann::json ran;
  if (request.nproc > 1) {
    predictions.push_back(predict_ranks(request, base, options, dir));
    const auto& check = predictions.back().value("check", nlohmann::json());
    if (check.is_object() && check.contains("runs")) ran = check;
  }
  if (!request.sharding.empty() || request.device_memory_bytes > 0) {
    nlohmann::json p = predict_sharded_memory(base, request.nproc, sharding, request.device_memory_bytes,
                                              request.bucket_mb * 1024 * 1024);
    if (request.check) p["check"] = check_sharded_memory(request, options, p, dir, ran);
    predictions.push_back(p);
  }
  if (!request.speedups.empty()) {
    nlohmann::json p = predict_class_speedups(base, request.speedups);
    if (request.check) p["check"] = {{"not_available", "no switch makes an operator class k times faster"}};
    predictions.push_back(p);
  }
  if (request.roofline) predictions.push_back(predict_at_roofline(base));
  if (request.memory_limit_bytes > 0) {
    nlohmann::json p = predict_memory_limit(base, request.memory_limit_bytes);
    if (request.check) p["check"] = check_memory(request, options, p, dir);
    predictions.push_back(p);
  }
  const nlohmann::json doc = {{"schema", kPredictionSchema},
                              {"base", request.base},
                              {"base_label", configuration_label(base)},
                              {"predictions", predictions}};
  if (!request.out.empty()) write_json_atomically(request.out, doc);
  print_prediction(human, doc);
  return {doc, interrupted_exit_status()};  // 130/143 when a signal cut a measurement short
}

}  // namespace tbd
