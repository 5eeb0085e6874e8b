// `tbd scale WORKLOAD --nproc 1,2,4 [run options]`: data-parallel scaling.
// The options; the study itself (the runs, speed-up and efficiency, the
// table) is tbd/study/scale.h.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "cli/study_command.h"
#include "tbd/study/scale.h"

namespace tbd::cli {

Command add_scale_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("scale",
                                 "Data-parallel scaling: throughput, speed-up and efficiency "
                                 "against the number of local processes");
  struct Args {
    std::string workload, nproc = "1,2", out;
    bool oversubscribe = false, json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("workload", a->workload, "Workload name (see `tbd list`)")->required();
  cmd->add_option("--nproc", a->nproc, "Process counts to run, comma-separated")->capture_default_str();
  refuse_empty(cmd->add_option("--out", a->out, "Write the scaling result (with every run inside) to this file"));
  cmd->add_flag("--json", a->json, "Print the scaling result on stdout; the table goes to stderr");
  cmd->add_flag("--oversubscribe", a->oversubscribe,
                "Run process counts beyond this machine's CPUs (CPU runs) or available memory");
  cmd->allow_extras();
  cmd->footer(
      "Other options (--scale, --batch-size, --iters, --threads, ...) are passed to every `tbd run`.\n"
      "--batch-size is per process: the global batch grows with the process count (weak scaling).");
  return {cmd, [a, cmd]() {
            ScaleRequest request;
            request.workload = a->workload;
            request.counts = parse_process_counts(a->nproc);
            request.run =
                parse_run_options(cmd->remaining(), a->workload,
                                  {"tbd scale", {"--out", "--json", "--nproc"}, "; give --out to scale instead"});
            request.out = a->out;
            request.oversubscribe = a->oversubscribe;
            request.program = program_args()[0];
            return run_study(a->json, [&](std::ostream& human) { return run_scale(request, human); });
          }};
}

}  // namespace tbd::cli
