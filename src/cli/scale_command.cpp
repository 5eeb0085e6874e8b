// `tbd scale WORKLOAD --nproc 1,2,4 [run options]`: data-parallel scaling.
// Each process count runs as `tbd run WORKLOAD --nproc N` (local workers);
// speed-up and scaling efficiency = throughput(n) / (n · throughput(1)).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "cli/commands.h"
#include "tbd/core/error.h"
#include "tbd/dist/local_capacity.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/measure/environment.h"
#include "tbd/measure/runner.h"
#include "tbd/report/result_file.h"

namespace tbd::cli {
namespace {

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      const int n = std::stoi(part, &used);
      if (used != part.size() || n < 1 || n > 1024) throw std::invalid_argument(part);
      counts.push_back(n);
    } catch (const std::exception&) {
      throw UsageError("--nproc takes a comma-separated list of process counts such as 1,2,4; got '" + text + "'");
    }
  }
  if (counts.empty()) throw UsageError("--nproc needs at least one process count, e.g. 1,2");
  return counts;
}

double global_throughput(const nlohmann::json& r) {
  if (r.contains("distributed")) return r["distributed"]["global_samples_per_s"].get<double>();
  return r["throughput"]["samples_per_s"].get<double>();
}

}  // namespace

Command add_scale_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("scale", "Data-parallel scaling: throughput, speed-up and efficiency "
                                          "against the number of local processes");
  struct Args {
    std::string workload, nproc = "1,2", out;
    bool oversubscribe = false, json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("workload", a->workload, "Workload name (see `tbd list`)")->required();
  cmd->add_option("--nproc", a->nproc, "Process counts to run, comma-separated")->capture_default_str();
  cmd->add_option("--out", a->out, "Write the scaling result (with every run inside) to this file");
  cmd->add_flag("--json", a->json, "Print the scaling result on stdout; the table goes to stderr");
  cmd->add_flag("--oversubscribe", a->oversubscribe,
                "Run process counts beyond this machine's CPUs (CPU runs) or available memory");
  cmd->allow_extras();
  cmd->footer("Other options (--scale, --batch-size, --iters, --threads, ...) are passed to every `tbd run`.\n"
              "--batch-size is per process: the global batch grows with the process count (weak scaling).");
  return {cmd, [a, cmd]() {
            const auto counts = parse_counts(a->nproc);
            check_data_parallel_supported(a->workload, *std::max_element(counts.begin(), counts.end()));
            if (!a->out.empty()) check_output_path(a->out);
            const std::vector<std::string> extras = cmd->remaining();
            bool on_cpu = true;
            for (size_t i = 0; i < extras.size(); ++i) {
              if (extras[i] == "--out" || extras[i] == "--json" || extras[i] == "--nproc")
                throw UsageError("tbd scale sets " + extras[i] + " of its runs itself; give --out to scale instead");
              if (extras[i] == "--device" && i + 1 < extras.size() && extras[i + 1] != "cpu") on_cpu = false;
            }
            if (!a->oversubscribe) check_local_ranks_fit(*std::max_element(counts.begin(), counts.end()), on_cpu);
            const auto dir = std::filesystem::temp_directory_path() /
                             ("tbd-scale-" + std::to_string(::getpid()));
            std::filesystem::create_directories(dir);
            nlohmann::json points = nlohmann::json::array();
            double baseline = 0;  // throughput at the first process count
            std::ostream& human = a->json ? std::cerr : std::cout;  // stdout holds only the JSON then
            human << fmt::format("{:>6} {:>16} {:>9} {:>11}\n", "nproc", "samples/s", "speed-up", "efficiency");
            for (int n : counts) {
              const std::string file = (dir / ("nproc-" + std::to_string(n) + ".json")).string();
              std::vector<std::string> args = {program_args()[0], "run", a->workload};
              args.insert(args.end(), extras.begin(), extras.end());
              args.insert(args.end(), {"--nproc", std::to_string(n), "--out", file, "--quiet"});
              const int rc = run_local_workers(args, n);
              if (rc != 0) {
                std::filesystem::remove_all(dir);
                if (rc == 2) throw UsageError("the runs of tbd scale were refused (see above)");
                throw Error("the run with " + std::to_string(n) + " process(es) failed (see above)");
              }
              std::ifstream in(file);
              const nlohmann::json r = nlohmann::json::parse(in);
              const double rate = global_throughput(r);
              if (baseline == 0) baseline = rate;
              // Against the first count n0: speed-up t(n)/t(n0), efficiency t(n)·n0/(n·t(n0)).
              const double speedup = baseline > 0 ? rate / baseline : 0;
              const double efficiency = baseline > 0 ? rate * counts.front() / (n * baseline) : 0;
              human << fmt::format("{:>6} {:>16.4g} {:>9.3f} {:>10.1f}%\n", n, rate, speedup, 100 * efficiency);
              points.push_back({{"nproc", n}, {"samples_per_s", rate}, {"speedup", speedup},
                                {"efficiency", efficiency}, {"result", r}});
            }
            std::filesystem::remove_all(dir);
            const std::string unit = points[0]["result"]["throughput"]["unit"];
            human << fmt::format("throughput in {} across all processes; efficiency = throughput(n) / "
                                 "(n · throughput per process at {})\n", unit, counts.front());
            const nlohmann::json scale = {{"schema", "tbd.scale/1"},
                                          {"workload", a->workload},
                                          {"unit", unit},
                                          {"baseline_nproc", counts.front()},
                                          {"points", points},
                                          {"environment", capture_environment()}};
            if (!a->out.empty()) write_json_atomically(a->out, scale);
            if (a->json) std::cout << scale.dump(2) << "\n";
            return 0;
          }};
}

}  // namespace tbd::cli
