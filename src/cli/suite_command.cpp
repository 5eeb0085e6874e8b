// `tbd suite [--preset quick|paper|gpu] [--workloads a,b] [--out DIR]`: many
// workloads into one folder with an index. The options; the study itself
// (the plan, child runs, index.json, resuming) is tbd/study/suite.h.
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/run_args.h"
#include "cli/study_command.h"
#include "tbd/study/child_run.h"
#include "tbd/study/suite.h"

namespace tbd::cli {

Command add_suite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("suite",
                                 "Run many workloads into one results folder with an index; "
                                 "failures are recorded and the suite goes on");
  struct Args {
    std::string preset = "quick", workloads, out, mllog, csv;
    std::vector<std::string> per_workload;  // "W:--opt value ..."
    bool force = false, json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--preset", a->preset,
                  "quick (every workload, small scale, ~10 min on 2 cores), paper "
                  "(full scale, default batch sizes) or gpu (full scale, batch sizes "
                  "for a large GPU; add --device cuda)")
      ->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Comma-separated workloads (default: all registered)");
  refuse_empty(cmd->add_option("--out", a->out, "Results folder (default: suite-PRESET)"));
  cmd->add_option("--for", a->per_workload,
                  "Options for one workload only, as W:OPTIONS, e.g. "
                  "'resnet50:--batch-size 16' (repeatable)");
  cmd->add_flag("--force", a->force, "Redo runs the index records as completed");
  cmd->add_flag("--json", a->json, "Print the suite's index (index.json) on stdout; the summary goes to stderr");
  declare_run_logs(*cmd, a->mllog, a->csv);
  cmd->allow_extras();
  cmd->footer(
      "Other options (--threads, --device, --precision, ...) are passed to every `tbd run`.\n"
      "Files: DIR/index.json (tbd.suite/1), DIR/W.json (results), DIR/logs/W.log.\n"
      "The folder is locked (DIR/.tbd.lock) while the suite and its runs write into it.\n"
      "Exit status: 0 every run completed, 1 at least one failed (the others still ran),\n"
      "130/143 stopped by SIGINT/SIGTERM (the current run's partial result is kept).");
  return {cmd, [a, cmd]() {
            SuiteRequest request;
            request.preset = a->preset;
            request.run_options = cmd->remaining();
            // `--workloads ''` is an empty list, refused; not the default set, which is --workloads not given.
            const auto workloads =
                cmd->count("--workloads") > 0 ? std::optional<std::string>(a->workloads) : std::nullopt;
            request.runs = plan_suite(a->preset, workloads, request.run_options, a->per_workload);
            // Each --for alone first, so a refusal says which one it is in.
            for (const auto& spec : a->per_workload) {
              const auto [w, words] = read_for_spec(spec);
              parse_run_options(
                  words, w, {"tbd suite --for " + w, {"--out", "--json", "--quiet"}, "; give --out to suite instead"});
            }
            // Each run's options as `tbd run` will read them, so none is refused after others ran.
            for (const auto& run : request.runs)
              parse_run_options(run.options, run.workload,
                                {"tbd suite", {"--out", "--json", "--quiet"}, "; give --out to suite instead"});
            request.out = a->out;
            request.force = a->force;
            request.mllog = a->mllog;
            request.csv = a->csv;
            request.program = program_args()[0];
            request.command = command_line(program_args());
            return run_study(a->json, [&](std::ostream& human) { return run_suite(request, human); });
          }};
}

}  // namespace tbd::cli
