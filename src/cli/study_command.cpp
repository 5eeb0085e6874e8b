#include "cli/study_command.h"

#include <CLI/CLI.hpp>

#include "cli/run_args.h"

namespace tbd::cli {

void declare_run_logs(CLI::App& cmd, std::string& mllog, std::string& csv) {
  refuse_empty(cmd.add_option("--mllog", mllog, "Append MLPerf-style :::MLLOG lines of every run to this file"));
  refuse_empty(cmd.add_option("--csv", csv, "Append one CSV row per run to this file"));
}

}  // namespace tbd::cli
