#include "cli/run_args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/core/run_option_table.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/output/result_file.h"
#include "tbd/study/comma_list.h"

namespace tbd::cli {

RunArgs::RunArgs() : probes(join_commas(default_probes())) {}

CLI::Option* refuse_empty(CLI::Option* option) {
  return option->check(CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("needs a name, got ''") : std::string(); }, "PATH"));
}

void declare_table_options(CLI::App& cmd, RunArgs& a, const std::vector<std::string>& only) {
  for (const auto& spec : run_option_table()) {
    const std::string flag = spec.flag;
    if (!only.empty() && std::find(only.begin(), only.end(), flag) == only.end()) continue;
    CLI::Option* option = nullptr;
    if (spec.takes == RunOptionSpec::Takes::nothing) {
      option = cmd.add_flag_callback(
          flag, [&a, flag] { a.given.emplace_back(flag, ""); }, spec.help);
    } else if (spec.takes == RunOptionSpec::Takes::values) {
      option = cmd.add_option_function<std::vector<std::string>>(
          flag,
          [&a, flag](const std::vector<std::string>& texts) {
            for (const auto& text : texts) a.given.emplace_back(flag, text);
          },
          spec.help);
    } else {
      option = cmd.add_option_function<std::string>(
          flag, [&a, flag](const std::string& text) { a.given.emplace_back(flag, text); }, spec.help);
    }
    if (!spec.default_text.empty()) option->default_str(spec.default_text);
    if (spec.hidden) option->group("");
  }
}

void declare_run_options(CLI::App& cmd, RunArgs& a) {
  declare_table_options(cmd, a, {});
  cmd.add_option("--probes", a.probes,
                 "Comma-separated probes (time always runs) from " + join_commas(probe_names()) + ", or all")
      ->capture_default_str();
  cmd.add_flag("--oversubscribe", a.oversubscribe,
               "Start --nproc ranks even beyond this machine's CPUs (CPU runs) or available memory");
  refuse_empty(
      cmd.add_option("--trace", a.trace.path,
                     "Write a Chrome/Perfetto trace (Kineto) of a few iterations run after the measured window"));
  refuse_empty(
      cmd.add_option("--execution-trace", a.trace.execution_trace,
                     "Write PyTorch's execution trace (operator graph, for Chakra and ASTRA-sim) of the --trace-iters "
                     "iterations; linked to the --trace file when both are given"));
  cmd.add_option("--trace-iters", a.trace.iterations, "Iterations in the --trace file")->capture_default_str();
  refuse_empty(cmd.add_option("--mllog", a.mllog, "Append MLPerf-style :::MLLOG lines of the run to this file"));
  refuse_empty(cmd.add_option("--csv", a.csv, "Append one CSV row for the run to this file (header when new)"));
}

RunOptions resolve(const RunArgs& args) {
  RunOptions o;
  o.workload = args.workload;
  for (const auto& [flag, text] : args.given) find_run_option(flag)->parse(o, text);
  validate(o);
  if (!o.out.empty()) check_output_path(o.out);
  check_distinct_outputs({{"--out", o.out},
                          {"--trace", args.trace.path},
                          {"--execution-trace", args.trace.execution_trace},
                          {"--mllog", args.mllog},
                          {"--csv", args.csv}});
  return o;
}

std::vector<std::string> resolve_probes(const RunArgs& args) {
  const auto probes = args.probes == "all" ? probe_names() : list_items(args.probes, "--probes", "time,data");
  for (const auto& p : probes) make_probe(p);  // unknown names fail before the run
  return probes;
}

PassedRunOptions parse_run_options(const std::vector<std::string>& tokens, const std::string& workload,
                                   const PassThrough& pass) {
  CLI::App scratch{"tbd run options of " + pass.study};
  scratch.set_help_flag();  // --help among run options is a mistake, not a request for run's help
  RunArgs args;
  declare_run_options(scratch, args);
  std::string refused;
  try {
    std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());  // CLI11 takes them from the back
    scratch.parse(reversed);
  } catch (const CLI::ParseError& e) {
    refused = std::string(e.what()) + "; see tbd run --help";  // as `tbd run` itself would say it
  }
  // Before a parse error: `--batch-size x` to a sweep is a sweep's option given in the wrong place.
  for (const auto& name : pass.own)
    if (scratch.count(name) > 0) throw UsageError(pass.study + " sets " + name + " of its runs itself" + pass.own_hint);
  if (!refused.empty()) throw UsageError("the runs of " + pass.study + " were refused: " + refused);
  args.workload = workload;
  PassedRunOptions passed;
  passed.tokens = tokens;
  try {
    passed.options = resolve(args);
    passed.probes = resolve_probes(args);
    if (args.trace.iterations < 1) throw UsageError("--trace-iters must be at least 1");
  } catch (const UsageError& e) {
    throw UsageError("the runs of " + pass.study + " were refused: " + e.what());
  }
  return passed;
}

}  // namespace tbd::cli
