// `tbd sweep W --batch-sizes 1,2,4|auto [run options]`: one child `tbd run`
// per batch size into a results folder, a tbd.sweep/1 index and a table.
// `auto` doubles the batch size until a run is out of memory: the runner's
// out-of-memory error, the kernel's OOM killer (SIGKILL), or a peak of the
// memory probe above --memory-limit (the run would not fit a device with
// that much memory; docs/analysis.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/byte_size.h"
#include "tbd/study/child_run.h"
#include "tbd/study/comma_list.h"
#include "cli/commands.h"
#include "tbd/study/folder_lock.h"
#include "tbd/core/error.h"
#include "tbd/core/registry.h"
#include "tbd/measure/environment.h"
#include "tbd/measure/interrupt.h"
#include "tbd/measure/probe.h"
#include "tbd/report/mllog.h"
#include "tbd/report/progress.h"
#include "tbd/report/result_file.h"
#include "tbd/report/result_set.h"
#include "tbd/report/summary.h"

namespace tbd::cli {
namespace fs = std::filesystem;
namespace {

std::vector<long long> parse_batch_list(const std::string& text) {
  std::vector<long long> sizes;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      const long long b = std::stoll(part, &used);
      if (used != part.size() || b < 1) throw std::invalid_argument(part);
      sizes.push_back(b);
    } catch (const std::exception&) {
      throw UsageError("--batch-sizes takes 'auto' or a comma-separated list of sizes such as 1,2,4,8; got '" +
                       text + "'");
    }
  }
  if (sizes.empty()) throw UsageError("--batch-sizes needs at least one batch size, or 'auto'");
  return sizes;
}

long long host_memory_bytes() {
  const nlohmann::json env = capture_environment();
  if (env.contains("memory") && env["memory"].contains("total_bytes") && env["memory"]["total_bytes"].is_number())
    return env["memory"]["total_bytes"].get<long long>();
  return 0;
}

struct SweepArgs {
  std::string workload, batch_sizes = "auto", out, memory_limit, mllog, csv;
  long long start = 1, max_batch = 65536;
  bool json = false;
};

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Throughput, utilisation and memory against batch size "
                                          "(one run per batch size; auto: until out of memory)");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("workload", a->workload, "Workload name (see `tbd list`)")->required();
  cmd->add_option("--batch-sizes", a->batch_sizes, "Comma-separated batch sizes, or auto (double until out of memory)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Results folder (default: sweep-WORKLOAD)");
  cmd->add_flag("--json", a->json, "Print the sweep document (sweep.json) on stdout; the table goes to stderr");
  cmd->add_option("--memory-limit", a->memory_limit,
                  "auto stops where the memory probe's peak exceeds this (e.g. 2G); default on CPU: 75% of RAM");
  cmd->add_option("--start", a->start, "First batch size of auto")->capture_default_str();
  cmd->add_option("--max-batch", a->max_batch, "Largest batch size auto tries")->capture_default_str();
  cmd->add_option("--mllog", a->mllog, "Append MLPerf-style :::MLLOG lines of every run to this file");
  cmd->add_option("--csv", a->csv, "Append one CSV row per run to this file");
  cmd->allow_extras();
  cmd->footer("Other options (--scale, --iters, --threads, --probes, --set ...) are passed to every `tbd run`.\n"
              "Files: DIR/bs-N.json (results), DIR/logs/bs-N.log, DIR/sweep.json (tbd.sweep/1).\n"
              "An out-of-memory run is recorded as such and ends the doubling (or the list); a run someone\n"
              "killed is recorded as killed. The folder is locked (DIR/.tbd.lock) while the sweep runs.\n"
              "Exit status: 0 some batch size fitted, 1 none did, 130/143 stopped by SIGINT/SIGTERM.");
  return {cmd, [a, cmd]() {
            create_workload(a->workload);  // an unknown name fails now, listing the known ones
            const bool automatic = a->batch_sizes == "auto";
            std::vector<long long> sizes;
            if (!automatic) sizes = parse_batch_list(a->batch_sizes);
            if (a->start < 1 || a->max_batch < a->start)
              throw UsageError("--start must be at least 1 and --max-batch at least --start");
            std::vector<std::string> extras = cmd->remaining();
            for (const auto& e : extras)
              if (e == "--out" || e == "--json" || e == "--batch-size" || e == "--quiet" || e == "--trace")
                throw UsageError("tbd sweep sets " + e + " of its runs itself (give --out to sweep; --batch-sizes)");
            long long limit = a->memory_limit.empty() ? 0 : parse_byte_size(a->memory_limit, "--memory-limit");
            std::string limit_source = a->memory_limit.empty() ? "" : "--memory-limit";
            bool on_cpu = true;
            for (size_t i = 0; i + 1 < extras.size(); ++i)
              if (extras[i] == "--device" && extras[i + 1] != "cpu") on_cpu = false;
            if (automatic && limit == 0 && on_cpu) {
              limit = host_memory_bytes() * 3 / 4;  // before the OOM killer would end more than the run
              limit_source = "75% of this machine's memory";
            }
            // The limit is judged by the memory probe: make sure it runs.
            if (limit > 0) {
              bool has_probes = false;
              for (size_t i = 0; i + 1 < extras.size(); ++i)
                if (extras[i] == "--probes") {
                  has_probes = true;
                  if (extras[i + 1] != "all" && extras[i + 1].find("memory") == std::string::npos)
                    extras[i + 1] += ",memory";
                }
              if (!has_probes) extras.insert(extras.end(), {"--probes", join_commas(default_probes())});
            }
            if (!a->mllog.empty()) check_log_path(a->mllog, "--mllog");
            if (!a->csv.empty()) check_log_path(a->csv, "--csv");
            const std::string dir = a->out.empty() ? "sweep-" + a->workload : a->out;
            check_results_folder(dir, "tbd sweep");
            fs::create_directories(fs::path(dir) / "logs");
            const FolderLock lock(dir, command_line(program_args()));

            install_interrupt_handler();
            nlohmann::json points = nlohmann::json::array();
            long long largest_fit = 0;
            std::string stopped_by;
            StudyProgress progress("sweep " + a->workload, automatic ? 1 : static_cast<int>(sizes.size()));
            long long next = a->start;
            for (size_t index = 0;; ++index) {
              long long b = 0;
              if (automatic) {
                if (next > a->max_batch) {
                  stopped_by = "reached --max-batch " + std::to_string(a->max_batch);
                  break;
                }
                b = next;
                progress.set_total(static_cast<int>(index) + 1);
              } else {
                if (index >= sizes.size()) break;
                b = sizes[index];
              }
              const std::string name = "bs-" + std::to_string(b);
              const std::string file = (fs::path(dir) / (name + ".json")).string();
              const std::string log = (fs::path(dir) / "logs" / (name + ".log")).string();
              std::vector<std::string> args = {program_args()[0], "run", a->workload, "--batch-size", std::to_string(b)};
              args.insert(args.end(), extras.begin(), extras.end());
              args.insert(args.end(), {"--out", file, "--quiet"});
              if (!a->mllog.empty()) args.insert(args.end(), {"--mllog", a->mllog});
              if (!a->csv.empty()) args.insert(args.end(), {"--csv", a->csv});
              fs::remove(file);
              progress.begin("batch " + std::to_string(b));
              const ChildOutcome run = run_child(args, log);
              nlohmann::json point = {{"batch_size", b}, {"log", log}, {"seconds", run.seconds}};
              std::string status;
              if (run.exit_code == 2) {
                progress.finish();
                throw UsageError("the runs of tbd sweep were refused: " + run.error);
              }
              if (run.ok() || (run.interrupted() && fs::exists(file))) {
                std::ifstream in(file);
                const nlohmann::json r = nlohmann::json::parse(in);
                const long long peak = peak_memory_bytes(r);
                point["peak_memory_bytes"] = peak >= 0 ? nlohmann::json(peak) : nlohmann::json(nullptr);
                point["samples_per_s"] = throughput_of(r);
                point["unit"] = throughput_unit(r);
                point["median_iteration_s"] = median_iteration_s(r);
                const double cpu = cpu_utilisation(r), fl = flops_utilisation(r);
                point["cpu_utilisation"] = std::isfinite(cpu) ? nlohmann::json(cpu) : nlohmann::json(nullptr);
                point["flops_utilisation"] = std::isfinite(fl) ? nlohmann::json(fl) : nlohmann::json(nullptr);
                if (limit > 0 && peak > limit) {
                  // Measured, but it would not fit: its figures stay in this point, its result
                  // file goes, so reports and comparisons do not take it for a fitting run.
                  fs::remove(file);
                  point["status"] = status = "out_of_memory";
                  point["error"] = fmt::format("peak memory {} bytes exceeds the limit of {} bytes ({})", peak, limit,
                                               limit_source);
                } else {
                  point["status"] = status = r.value("partial", false) || run.interrupted() ? "partial" : "ok";
                  if (run.interrupted()) point["error"] = run.error;
                  point["file"] = file;
                  if (status == "ok") largest_fit = std::max(largest_fit, b);
                }
              } else {
                point["status"] = status = run.out_of_memory() ? "out_of_memory" : run.killed() ? "killed" : "failed";
                point["error"] = run.error;
              }
              points.push_back(point);
              progress.end("batch " + std::to_string(b),
                           status == "ok" ? fmt::format("ok, {:.4g} {}", point["samples_per_s"].get<double>(),
                                                        point["unit"].get<std::string>())
                                          : status + (point.contains("error") ? ": " + point["error"].get<std::string>() : ""));
              if (interrupt_requested() || status == "partial") {
                stopped_by = run.interrupted() ? run.error : "interrupted";
                break;
              }
              if (status == "out_of_memory") {
                stopped_by = "out of memory at batch size " + std::to_string(b);
                // A larger batch of a fixed list would not fit either.
                for (size_t k = index + 1; !automatic && k < sizes.size(); ++k)
                  points.push_back({{"batch_size", sizes[k]}, {"status", "skipped"},
                                    {"error", "a smaller batch size ran out of memory"}});
                break;
              }
              next = b * 2;
            }
            progress.finish();
            const nlohmann::json sweep = {
                {"schema", kSweepSchema},
                {"workload", a->workload},
                {"batch_sizes", automatic ? nlohmann::json("auto") : nlohmann::json(sizes)},
                {"memory_limit_bytes", limit > 0 ? nlohmann::json(limit) : nlohmann::json(nullptr)},
                {"memory_limit_source", limit_source},
                {"run_options", extras},
                {"points", points},
                {"largest_fitting_batch", largest_fit > 0 ? nlohmann::json(largest_fit) : nlohmann::json(nullptr)},
                {"stopped_by", stopped_by},
                {"environment", capture_environment()}};
            write_json_atomically((fs::path(dir) / "sweep.json").string(), sweep);
            std::ostream& human = a->json ? std::cerr : std::cout;  // stdout holds only the JSON then

            human << fmt::format("{:>8} {:>16} {:>13} {:>8} {:>8} {:>12}  {}\n", "batch", "throughput",
                                     "iteration", "CPU", "FLOP%", "peak memory", "status");
            for (const auto& p : points) {
              const auto num = [&](const char* k) {
                return p.contains(k) && p[k].is_number() ? p[k].get<double>() : NAN;
              };
              const auto cell = [](double v, const char* f) { return std::isfinite(v) ? fmt::format(fmt::runtime(f), v) : "-"; };
              const std::string unit = p.contains("unit") ? p["unit"].get<std::string>() : "";
              human << fmt::format("{:>8} {:>16} {:>13} {:>8} {:>8} {:>12}  {}\n", p["batch_size"].get<long long>(),
                                       std::isfinite(num("samples_per_s")) ? fmt::format("{:.4g} {}", num("samples_per_s"), unit) : "-",
                                       cell(1e3 * num("median_iteration_s"), "{:.4g} ms"),
                                       cell(100 * num("cpu_utilisation"), "{:.0f}%"),
                                       cell(100 * num("flops_utilisation"), "{:.1f}%"),
                                       std::isfinite(num("peak_memory_bytes")) ? fmt::format("{:.1f} MiB", num("peak_memory_bytes") / 1048576) : "-",
                                       p["status"].get<std::string>() +
                                           (p.contains("error") ? " (" + p["error"].get<std::string>() + ")" : ""));
            }
            if (largest_fit > 0)
              human << "largest batch size that fits: " << largest_fit
                        << (stopped_by.empty() ? "" : " (stopped: " + stopped_by + ")") << "\n";
            else
              human << "no batch size ran to completion" << (stopped_by.empty() ? "" : " (" + stopped_by + ")") << "\n";
            human << "results in " << dir << " (sweep.json; tbd report " << dir << ")\n";
            if (a->json) std::cout << sweep.dump(2) << "\n";
            if (const int status = interrupted_exit_status(); status != 0) return status;  // 130, 143
            return largest_fit > 0 ? 0 : 1;
          }};
}

}  // namespace tbd::cli
