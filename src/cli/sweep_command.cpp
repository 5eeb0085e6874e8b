// `tbd sweep W --batch-sizes 1,2,4|auto [run options]`: throughput,
// utilisation and memory against batch size. The options; the study itself
// (child runs, stop rules, sweep.json, the table) is tbd/study/sweep.h.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "cli/study_command.h"
#include "tbd/core/byte_size.h"
#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/core/options.h"
#include "tbd/study/child_run.h"
#include "tbd/study/sweep.h"

namespace tbd::cli {
namespace {

struct SweepArgs {
  std::string workload, batch_sizes = "auto", out, memory_limit, mllog, csv;
  // Text, read by batch_bound: CLI11's own conversion saturates
  // 99999999999999999999 to 2^63 - 1, a bound no sweep would reach.
  std::string start = "1", max_batch = "65536";
  bool json = false;
};

long long batch_bound(const std::string& text, const std::string& flag) {
  const auto n = unsigned_from_text(text);
  if (!n || *n < 1 || *n > static_cast<unsigned long long>(kMaxBatchSize))
    throw UsageError(flag + " must be a batch size in [1, " + std::to_string(kMaxBatchSize) + "], got '" + text + "'");
  return static_cast<long long>(*n);
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep",
                                 "Throughput, utilisation and memory against batch size "
                                 "(one run per batch size; auto: until out of memory)");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("workload", a->workload, "Workload name (see `tbd list`)")->required();
  cmd->add_option("--batch-sizes", a->batch_sizes, "Comma-separated batch sizes, or auto (double until out of memory)")
      ->capture_default_str();
  refuse_empty(cmd->add_option("--out", a->out, "Results folder (default: sweep-WORKLOAD)"));
  cmd->add_flag("--json", a->json, "Print the sweep document (sweep.json) on stdout; the table goes to stderr");
  cmd->add_option("--memory-limit", a->memory_limit,
                  "auto stops where the memory probe's peak exceeds this (e.g. 2G); default on CPU: 75% of RAM");
  cmd->add_option("--start", a->start, "First batch size of auto")->capture_default_str();
  cmd->add_option("--max-batch", a->max_batch, "Largest batch size auto tries")->capture_default_str();
  declare_run_logs(*cmd, a->mllog, a->csv);
  cmd->allow_extras();
  cmd->footer(
      "Other options (--scale, --iters, --threads, --probes, --set ...) are passed to every `tbd run`.\n"
      "Files: DIR/bs-N.json (results), DIR/logs/bs-N.log, DIR/sweep.json (tbd.sweep/1).\n"
      "An out-of-memory run is recorded as such and ends the doubling (or the list); a run someone\n"
      "killed is recorded as killed. The folder is locked (DIR/.tbd.lock) while the sweep runs.\n"
      "Exit status: 0 some batch size fitted, 1 none did, 130/143 stopped by SIGINT/SIGTERM.");
  return {cmd, [a, cmd]() {
            SweepRequest request;
            request.workload = a->workload;
            request.plan.automatic = a->batch_sizes == "auto";
            if (!request.plan.automatic) request.plan.sizes = parse_batch_sizes(a->batch_sizes);
            request.plan.start = batch_bound(a->start, "--start");
            request.plan.max_batch = batch_bound(a->max_batch, "--max-batch");
            request.run = parse_run_options(cmd->remaining(), a->workload,
                                            {"tbd sweep",
                                             {"--out", "--json", "--batch-size", "--quiet", "--trace"},
                                             " (give --out to sweep; --batch-sizes)"});
            // Given empty, it is refused by parse_byte_size rather than taken as "no limit".
            if (cmd->count("--memory-limit") > 0)
              request.memory_limit_bytes = parse_byte_size(a->memory_limit, "--memory-limit");
            request.out = a->out;
            request.mllog = a->mllog;
            request.csv = a->csv;
            request.program = program_args()[0];
            request.command = command_line(program_args());
            return run_study(a->json, [&](std::ostream& human) { return run_sweep(request, human); });
          }};
}

}  // namespace tbd::cli
