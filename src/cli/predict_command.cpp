// `tbd predict BASE.json [--nproc N] [--faster CLASS=K] [--roofline]
// [--memory-limit SIZE] [--check]`: what-if predictions from one
// single-process result, and (with --check) the error against a real run of
// the predicted configuration (docs/metrics.md#prediction).
//
// For N local ranks the ranks themselves measure what the model needs here:
// this command starts N workers of itself (as `tbd run --nproc` does), they
// measure the co-location slowdowns and the all-reduce of each bucket size,
// rank 0 writes them to a file, and this process predicts from them.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include <ATen/Parallel.h>

#include "cli/byte_size.h"
#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/dist/process_group.h"
#include "tbd/measure/ceilings.h"
#include "tbd/measure/runner.h"
#include "tbd/predict/bucket_allreduce.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/memory_model.h"
#include "tbd/predict/op_speedup_model.h"
#include "tbd/report/result_file.h"
#include "tbd/report/result_set.h"
#include "tbd/study/child_run.h"
#include "tbd/workloads/registry.h"

namespace tbd::cli {
namespace fs = std::filesystem;
namespace {

struct PredictArgs {
  std::string base, out, overlap = "on", memory_limit, calibrate_into, dir;
  int nproc = 0, runs = 1;
  double bucket_mb = 25, bus_gbps = 0, latency_us = 0;
  std::vector<std::string> faster;
  bool roofline = false, check = false, json = false;
};

nlohmann::json read_base(const std::string& path) {
  const ResultSet set = load_results(path);
  if (set.runs.size() != 1 || !set.runs.front().origin.empty())
    throw UsageError("tbd predict takes one result file written by `tbd run --out`; " + path + " holds " +
                     std::to_string(set.runs.size()) + " results");
  return set.runs.front().result;
}

// The `tbd run` arguments that make the base's configuration again.
std::vector<std::string> run_arguments_of(const nlohmann::json& base) {
  const auto& o = base.at("workload").at("options");
  const auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  std::vector<std::string> args = {program_args()[0], "run", base["workload"]["name"].get<std::string>()};
  const std::pair<const char*, const char*> flags[] = {{"scale", "--scale"},
                                                       {"batch_size", "--batch-size"},
                                                       {"precision", "--precision"},
                                                       {"device", "--device"},
                                                       {"optimizer_impl", "--optimizer-impl"},
                                                       {"memory_format", "--memory-format"},
                                                       {"host_allocator", "--host-allocator"},
                                                       {"threads", "--threads"},
                                                       {"data_workers", "--data-workers"},
                                                       {"warmup", "--warmup"},
                                                       {"iters", "--iters"},
                                                       {"min_time_s", "--min-time"},
                                                       {"repeat", "--repeat"},
                                                       {"seed", "--seed"}};
  for (const auto& [key, flag] : flags)
    if (o.contains(key) && !o[key].is_null()) args.insert(args.end(), {flag, text(o[key])});
  if (o.contains("instrument_iters") && o["instrument_iters"].is_number())  // else "auto": the default
    args.insert(args.end(), {"--instrument-iters", text(o["instrument_iters"])});
  if (o.value("data", std::string("synthetic")) != "synthetic") args.insert(args.end(), {"--data", text(o["data"])});
  for (const auto& [k, v] : o.value("settings", nlohmann::json::object()).items())
    args.insert(args.end(), {"--set", k + "=" + text(v)});
  return args;
}

std::map<std::string, double> parse_speedups(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    double k = 0;
    size_t used = 0;
    try {
      if (eq != std::string::npos) k = std::stod(item.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != item.size() - eq - 1 || !(k > 0) ||
        !std::isfinite(k))
      throw UsageError("--faster takes CLASS=FACTOR with a positive factor, e.g. --faster conv=2; got '" + item + "'");
    out[item.substr(0, eq)] = k;
  }
  return out;
}

// In each worker of a local launch: rank 0 writes the all-reduce times.
int measure_in_worker(const PredictArgs& a) {
  const nlohmann::json base = read_base(a.base);
  const auto& o = base["workload"]["options"];
  const c10::Device device(o.value("device", std::string("cpu")));
  // As each rank of the run: the stand-in computation's threads.
  if (o.value("threads", 0) > 0) at::set_num_threads(o["threads"].get<int>());
  auto group = ProcessGroup::connect(read_dist_environment(), device, std::chrono::seconds(120));
  const double step_seconds = replayable_phases(base)["iteration_ms"].get<double>() / 1e3;
  const nlohmann::json figures = measure_bucket_allreduces(*group, device, bucket_bytes_of(base, a.bucket_mb),
                                                           sparse_gradients_of(base), step_seconds);
  if (group->rank() == 0) write_json_atomically(a.calibrate_into, figures);
  return 0;
}

// The all-reduce of each bucket size among `ranks` local workers of this command.
nlohmann::json measure_allreduces_locally(const PredictArgs& a, const std::string& dir) {
  const std::string file = (fs::path(dir) / fmt::format("allreduce-{}-ranks.json", a.nproc)).string();
  std::vector<std::string> args = program_args();
  args.insert(args.end(), {"--calibrate-into", file});
  const int status = run_local_workers(args, a.nproc);
  if (status != 0)
    throw Error(fmt::format("measuring the all-reduce among {} local ranks failed (exit {})", a.nproc, status));
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

// Each rank's step when `ranks` copies of the base run at once on this host
// (no communication), `rounds` times: the copies' mean phases, and the mean
// over rounds of what the slowest copy adds to each iteration.
struct CoLocated {
  nlohmann::json phases = nlohmann::json::object();
  double straggle_s = 0;
  std::vector<std::string> files;
};

CoLocated measure_co_located(const nlohmann::json& base, int ranks, int rounds, const std::string& dir) {
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
      std::vector<std::string> args = run_arguments_of(base);
      // Ranks draw their data from streams seeded by rank (variable-length
      // workloads meet different lengths at the same step): copy i draws
      // rank i's, so iteration k of the copies sees what iteration k of the
      // ranks will.
      args.insert(args.end(),
                  {"--data-stream-rank", std::to_string(i), "--probes", "time", "--out", files.back(), "--quiet"});
      commands.push_back(args);
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < ranks; ++i) threads.emplace_back([&, i] { outcomes[i] = run_child(commands[i], logs[i]); });
    for (auto& t : threads) t.join();
    std::vector<std::vector<double>> iterations;
    for (int i = 0; i < ranks; ++i) {
      if (!outcomes[i].ok())
        throw Error("a co-located copy of the base failed: " + outcomes[i].error + " (" + command_line(commands[i]) +
                    ")");
      std::ifstream in(files[i]);
      const nlohmann::json r = nlohmann::json::parse(in);
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
nlohmann::json check_data_parallel(const nlohmann::json& base, const nlohmann::json& prediction, int ranks,
                                   const std::string& dir, bool overlap, double bucket_mb, int runs) {
  std::vector<double> rates;
  nlohmann::json files = nlohmann::json::array(), phases, comm, cv;
  std::string command;
  for (int i = 0; i < runs; ++i) {
    const std::string name = runs == 1 ? fmt::format("nproc-{}", ranks) : fmt::format("nproc-{}-run-{}", ranks, i + 1);
    const std::string file = (fs::path(dir) / (name + ".json")).string();
    const std::string log = (fs::path(dir) / (name + ".log")).string();
    std::vector<std::string> args = run_arguments_of(base);
    args.insert(args.end(), {"--nproc", std::to_string(ranks), "--bucket-mb", fmt::format("{}", bucket_mb),
                             "--dist-overlap", overlap ? "on" : "off", "--out", file, "--quiet"});
    const ChildOutcome run = run_child(args, log);
    if (!run.ok()) throw Error("the check run failed: " + run.error + " (log: " + log + ")");
    std::ifstream in(file);
    const nlohmann::json measured = nlohmann::json::parse(in);
    rates.push_back(throughput_of(measured));
    files.push_back(file);
    command = command_line(args);
    phases = measured.value("phases", nlohmann::json());  // the last run's, to compare term by term
    comm = measured.value("comm", nlohmann::json());
    cv = measured.at("throughput").value("repetition_cv", nlohmann::json());
  }
  double mean = 0;
  for (double r : rates) mean += r / static_cast<double>(rates.size());
  double var = 0;
  for (double r : rates) var += (r - mean) * (r - mean);
  const double predicted = prediction["global_samples_per_s"].get<double>();
  nlohmann::json out = {{"command", command},
                        {"result", files.back()},
                        {"runs", files},
                        {"measured_runs_samples_per_s", rates},
                        {"measured_global_samples_per_s", mean},
                        // The last run's own noise: the CV of its repetitions (rank 0's).
                        {"measured_repetition_cv", cv},
                        {"measured_phases", phases},
                        {"measured_comm", comm},
                        {"error", relative_error(predicted, mean)}};
  out["measured_process_cv"] = rates.size() > 1
                                   ? nlohmann::json(std::sqrt(var / static_cast<double>(rates.size() - 1)) / mean)
                                   : nlohmann::json(nullptr);
  return out;
}

nlohmann::json check_memory(const nlohmann::json& base, const nlohmann::json& prediction, long long limit,
                            const std::string& dir) {
  std::vector<std::string> args = run_arguments_of(base);
  args[1] = "sweep";
  for (size_t i = 3; i + 1 < args.size(); ++i)
    if (args[i] == "--batch-size")
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
  const std::string sweep_dir = (fs::path(dir) / "sweep").string();
  args.insert(args.end(), {"--batch-sizes", "auto", "--memory-limit", std::to_string(limit), "--out", sweep_dir});
  const ChildOutcome run = run_child(args, (fs::path(dir) / "sweep.log").string());
  const fs::path index = fs::path(sweep_dir) / "sweep.json";
  if (!fs::exists(index)) throw Error("the check sweep failed: " + run.error);
  std::ifstream in(index);
  const nlohmann::json sweep = nlohmann::json::parse(in);
  long long first_oom = 0;
  for (const auto& p : sweep["points"])
    if (p.value("status", std::string()) == "out_of_memory") first_oom = p["batch_size"].get<long long>();
  nlohmann::json out = {{"command", command_line(args)},
                        {"sweep", index.string()},
                        {"measured_largest_fitting_batch", sweep["largest_fitting_batch"]}};
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

void print_human(std::ostream& os, const nlohmann::json& doc) {
  os << "predictions for " << doc["base_label"].get<std::string>() << " (" << doc["base"].get<std::string>() << ")\n";
  for (const auto& p : doc["predictions"]) {
    const std::string kind = p["kind"];
    const std::string unit = p.value("unit", std::string("samples/s"));
    if (kind == "data_parallel") {
      const auto& t = p["iteration_ms"];
      os << fmt::format("  {} ranks: {:.4g} {} global ({:.4g} per rank), speed-up {:.2f}, efficiency {:.0f}%\n",
                        p["ranks"].get<int>(), p["global_samples_per_s"].get<double>(), unit,
                        p["per_rank_samples_per_s"].get<double>(), p["speedup"].get<double>(),
                        100 * p["efficiency"].get<double>());
      os << fmt::format(
          "    iteration {:.4g} ms = forward {:.3g} + backward {:.3g} + exposed all-reduce {:.3g} + "
          "bucket copies {:.3g} + optimizer {:.3g} + data/other {:.3g}\n",
          t["total"].get<double>(), t["forward"].get<double>(), t["backward"].get<double>(),
          t["communication_exposed"].get<double>(), t["bucket_copies"].get<double>(), t["optimizer"].get<double>(),
          t["data"].get<double>() + t["other"].get<double>());
      os << "    each rank's step: " << p["rank_phases"].get<std::string>()
         << "\n    all-reduce: " << p["allreduce"].get<std::string>() << "; straggler "
         << fmt::format("{:.3g} ms", t["straggler"].get<double>()) << "\n";
      if (p.value("sparse_allreduce_ms", 0.0) > 0)
        os << fmt::format(
            "    sparse gradients (tables stacked) all-reduced when backward ends, beside the last bucket: {:.3g} ms\n",
            p["sparse_allreduce_ms"].get<double>());
    } else if (kind == "class_speedup" || kind == "roofline") {
      std::string what = "every operator at its roofline ceiling";
      if (kind == "class_speedup") {
        what.clear();
        for (const auto& c : p["classes"])
          what += (what.empty() ? "" : ", ") +
                  fmt::format("{} {:g}x", c["class"].get<std::string>(), c["factor"].get<double>());
      }
      os << fmt::format("  {}: {:.4g} {} (speed-up {:.2f}; iteration {:.4g} -> {:.4g} ms)\n", what,
                        p["samples_per_s"].get<double>(), unit, p["speedup"].get<double>(),
                        p["base_iteration_ms"].get<double>(), p["iteration_ms"].get<double>());
    } else if (kind == "memory_limit") {
      os << fmt::format(
          "  memory limit {:.1f} MiB: fixed {:.1f} MiB + {:.3g} MiB per sample -> largest batch {}, "
          "first doubling that does not fit {}\n",
          p["limit_bytes"].get<double>() / 1048576, p["fixed_bytes"].get<double>() / 1048576,
          p["per_sample_bytes"].get<double>() / 1048576,
          p["largest_fitting_batch"].is_null() ? "none" : p["largest_fitting_batch"].dump(),
          p["first_out_of_memory_doubling"].is_null() ? "none" : p["first_out_of_memory_doubling"].dump());
    }
    if (p.contains("check")) {
      const auto& c = p["check"];
      if (c.contains("not_available"))
        os << "    check: not available: " << c["not_available"].get<std::string>() << "\n";
      else if (c.contains("error"))
        os << fmt::format(
            "    check: measured {:.4g} {} ({}), prediction error {:+.1f}% ({})\n",
            c["measured_global_samples_per_s"].get<double>(), unit,
            c["measured_process_cv"].is_number() ? fmt::format("mean of {} runs, CV {:.1f}%", c["runs"].size(),
                                                               100 * c["measured_process_cv"].get<double>())
            : c["measured_repetition_cv"].is_number()
                ? fmt::format("one run, repetition CV {:.1f}%", 100 * c["measured_repetition_cv"].get<double>())
                : std::string("one run"),
            100 * c["error"].get<double>(), c["result"].get<std::string>());
      else if (c["doubling_steps_off"].is_number())
        os << fmt::format(
            "    check: tbd sweep ran out of memory first at batch {}; prediction {:+.0f} doubling steps "
            "off ({})\n",
            c["measured_first_out_of_memory_batch"].dump(), c["doubling_steps_off"].get<double>(),
            c["sweep"].get<std::string>());
      else
        os << "    check: the sweep found no out-of-memory batch (" << c["sweep"].get<std::string>() << ")\n";
    }
  }
}

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict",
                                 "Predict from one result: N data-parallel ranks, an operator class k "
                                 "times faster, every op at its roofline, the batch where memory runs "
                                 "out; --check measures the prediction's error");
  auto a = std::make_shared<PredictArgs>();
  cmd->add_option("base", a->base, "A single-process result (tbd run --out) with the gradients probe")->required();
  cmd->add_option("--nproc", a->nproc, "Data-parallel ranks to predict (measured here unless --bus-gbps is given)");
  cmd->add_option("--bus-gbps", a->bus_gbps,
                  "Plan past this machine: the all-reduce bus bandwidth (GB/s, nccl-tests' busbw) between ranks that "
                  "each have their own device; no local measurement");
  cmd->add_option("--latency-us", a->latency_us, "With --bus-gbps: the all-reduce's fixed latency (µs)")
      ->capture_default_str();
  cmd->add_option("--bucket-mb", a->bucket_mb, "Gradient bucket size of the predicted run (MB)")->capture_default_str();
  cmd->add_option("--dist-overlap", a->overlap, "on: all-reduce during backward; off: after it")->capture_default_str();
  cmd->add_option("--faster", a->faster,
                  "CLASS=K: an operator class (as the ops probe names it) K times faster; "
                  "repeatable (needs the ops probe in the base)");
  cmd->add_flag("--roofline", a->roofline, "Every operator at its roofline ceiling (needs the roofline probe)");
  cmd->add_option("--memory-limit", a->memory_limit,
                  "Predict the batch size at which peak memory exceeds this "
                  "(512M, 8G; needs the memory probe)");
  cmd->add_flag("--check", a->check,
                "Run the predicted configuration (N ranks; tbd sweep --memory-limit) and "
                "report the prediction's error");
  cmd->add_option("--runs", a->runs,
                  "Rounds of each measurement --nproc makes (co-located copies of the base, the "
                  "--check run): processes are the unit of run-to-run noise; means are used")
      ->capture_default_str();
  cmd->add_option("--dir", a->dir,
                  "Folder for the runs the prediction measures (co-located copies of the base, the "
                  "all-reduce) and the --check runs (default: predict-WORKLOAD)");
  cmd->add_option("--out", a->out, "Write the predictions as JSON (tbd.prediction/1)");
  cmd->add_flag("--json", a->json, "Print the predictions as JSON");
  // Internal: where the launched workers' rank 0 writes the all-reduce times.
  cmd->add_option("--calibrate-into", a->calibrate_into)->group("");
  cmd->footer(
      "Nothing is predicted without a flag: give --nproc, --faster, --roofline or --memory-limit.\n"
      "The model and its limits: docs/metrics.md#prediction.");

  return {
      cmd, [a]() {
        if (!a->calibrate_into.empty()) return measure_in_worker(*a);
        if (a->nproc == 0 && a->faster.empty() && !a->roofline && a->memory_limit.empty())
          throw UsageError("nothing to predict: give --nproc N, --faster CLASS=K, --roofline or --memory-limit SIZE");
        if (a->nproc < 0 || a->nproc == 1)
          throw UsageError("--nproc must be at least 2 (the base is the single-process run), got " +
                           std::to_string(a->nproc));
        if (a->overlap != "on" && a->overlap != "off")
          throw UsageError("--dist-overlap must be on or off, got '" + a->overlap + "'");
        if (!(a->bucket_mb > 0)) throw UsageError("--bucket-mb must be positive");
        if (a->runs < 1) throw UsageError("--runs must be at least 1");
        if (a->bus_gbps < 0 || a->latency_us < 0) throw UsageError("--bus-gbps and --latency-us must not be negative");
        const auto speedups = parse_speedups(a->faster);
        const long long limit = a->memory_limit.empty() ? 0 : parse_byte_size(a->memory_limit, "--memory-limit");
        if (!a->out.empty()) check_output_path(a->out);
        const nlohmann::json base = read_base(a->base);
        const std::string workload = base["workload"]["name"];
        if (a->nproc > 1) check_data_parallel_supported(create_workload(workload)->info(), a->nproc);
        const std::string dir = a->dir.empty() ? "predict-" + workload : a->dir;
        if (a->check) fs::create_directories(dir);

        nlohmann::json predictions = nlohmann::json::array();
        if (a->nproc > 1) {
          DataParallelPlan plan;
          plan.ranks = a->nproc;
          plan.overlap = a->overlap == "on";
          plan.bucket_mb = a->bucket_mb;
          replayable_phases(base);  // fails now, before any worker starts, without phases or a timeline
          nlohmann::json figures;
          if (a->bus_gbps > 0) {
            const double bus = a->bus_gbps * 1e9, latency = a->latency_us * 1e-6;
            plan.allreduce_seconds = [bus, latency, n = a->nproc](double bytes) {
              return ring_allreduce_seconds(bytes, n, bus, latency);
            };
            plan.sparse_allreduce_seconds =
                ring_sparse_allreduce_seconds(sparse_gradients_of(base), a->nproc, bus, latency);
            plan.allreduce_source = fmt::format(
                "ring model, bus bandwidth {:g} GB/s, latency {:g} µs (given); "
                "one device per rank",
                a->bus_gbps, a->latency_us);
          } else {
            const auto& o = base["workload"]["options"];
            check_local_ranks_fit(a->nproc, o.value("device", std::string("cpu")) == "cpu");
            fs::create_directories(dir);
            figures = measure_allreduces_locally(*a, dir);
            std::map<double, double> measured;
            for (const auto& m : figures["allreduce"]) measured[m["bytes"].get<double>()] = m["seconds"].get<double>();
            plan.allreduce_seconds = [measured](double bytes) {
              // Every bucket size was measured; a missing one must not pass for a free all-reduce.
              const auto it = measured.find(bytes);
              if (it == measured.end()) throw Error(fmt::format("no all-reduce was measured for {} bytes", bytes));
              return it->second;
            };
            if (figures["sparse_allreduce"].is_object())
              plan.sparse_allreduce_seconds = figures["sparse_allreduce"]["seconds"].get<double>();
            plan.allreduce_source = fmt::format("{} all-reduce of each bucket size measured among {} local ranks",
                                                figures["backend"].get<std::string>(), a->nproc);
            const CoLocated co = measure_co_located(base, a->nproc, a->runs, dir);
            plan.rank_phases = co.phases;
            plan.straggle_s = co.straggle_s;
            plan.rank_phases_source = fmt::format(
                "measured: {} copies of the base running at once on this host, "
                "without communication, {} time(s) ({})",
                a->nproc, a->runs, fmt::join(co.files, ", "));
            const auto bw = ceilings_for_run(c10::Device(o.value("device", std::string("cpu"))), o.value("threads", 1),
                                             o.value("precision", std::string("fp32")))
                                .value("memory_bandwidth", nlohmann::json::object());
            if (bw.contains("bytes_per_s") && bw["bytes_per_s"].is_number()) plan.copy_bytes_per_s = bw["bytes_per_s"];
          }
          nlohmann::json p = predict_data_parallel(base, plan);
          if (!figures.is_null()) p["measured_here"] = figures;
          if (a->check) {
            if (a->bus_gbps > 0)
              p["check"] = {{"not_available",
                             "the prediction is for ranks with their own devices at the given "
                             "bandwidth; this machine cannot run that"}};
            else
              p["check"] = check_data_parallel(base, p, a->nproc, dir, plan.overlap, plan.bucket_mb, a->runs);
          }
          predictions.push_back(p);
        }
        if (!speedups.empty()) {
          nlohmann::json p = predict_class_speedups(base, speedups);
          if (a->check) p["check"] = {{"not_available", "no switch makes an operator class k times faster"}};
          predictions.push_back(p);
        }
        if (a->roofline) predictions.push_back(predict_at_roofline(base));
        if (limit > 0) {
          nlohmann::json p = predict_memory_limit(base, limit);
          if (a->check) p["check"] = check_memory(base, p, limit, dir);
          predictions.push_back(p);
        }
        const nlohmann::json doc = {{"schema", kPredictionSchema},
                                    {"base", a->base},
                                    {"base_label", configuration_label(base)},
                                    {"predictions", predictions}};
        if (!a->out.empty()) write_json_atomically(a->out, doc);
        if (a->json) std::cout << doc.dump(2) << "\n";
        print_human(a->json ? std::cerr : std::cout, doc);
        return 0;
      }};
}

}  // namespace tbd::cli
