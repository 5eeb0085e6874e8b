// The options of `tbd run`, declared once: `tbd run` parses its command line
// with them, and the studies (sweep, suite, scale) parse the `tbd run`
// options they pass to their runs with the same declarations, so what a run
// would refuse is refused before a study starts one.
#pragma once

#include <string>
#include <vector>

#include "tbd/core/options.h"
#include "tbd/measure/runner.h"  // TraceRequest
#include "tbd/study/passed_options.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tbd::cli {

// What CLI11 collects for `tbd run`, before validation: the RunOptions
// options as given (flag and text, in command-line order; the table in
// core/run_option_table.h reads them), and the options that are not
// RunOptions fields.
struct RunArgs {
  std::string workload;
  std::vector<std::pair<std::string, std::string>> given;  // {"--iters", "8"}; a switch has ""
  bool oversubscribe = false;
  std::string probes;  // the default list unless given
  TraceRequest trace;
  std::string mllog, csv;  // logs other tools read (docs/analysis.md)

  RunArgs();
};

// Refuses an empty value for `option` (a file or folder name): `--out ''`
// would otherwise mean "no output" or "the default folder" without a word.
// Returns `option`.
CLI::Option* refuse_empty(CLI::Option* option);

// Every option of `tbd run` except the workload (a positional of `tbd run`,
// a study's own argument) on `app`, writing into `args`.
void declare_run_options(CLI::App& app, RunArgs& args);

// Only the table's options named in `only` (`tbd plan` takes those that
// shape a step's memory); all of them when `only` is empty.
void declare_table_options(CLI::App& app, RunArgs& args, const std::vector<std::string>& only);

// Reads the given options through the option table and validates them
// (throws UsageError), and refuses two outputs of the run that name the
// same file (`--trace F --out F`: one would overwrite the other).
RunOptions resolve(const RunArgs& args);

// The probes of --probes, `all` expanded to every probe this build knows;
// an unknown name throws UsageError.
std::vector<std::string> resolve_probes(const RunArgs& args);

// How a study passes `tbd run` options to its runs.
struct PassThrough {
  std::string study;             // "tbd sweep", for messages
  std::vector<std::string> own;  // options the study sets on each run itself (--out, --batch-size ...)
  std::string own_hint;          // follows "tbd sweep sets --out of its runs itself"
};

// Parses `tokens` (the `tbd run` options given to a study for `workload`)
// once, with declare_run_options. Throws UsageError "STUDY sets OPTION of its
// runs itself..." for an option in `pass.own`, and "the runs of STUDY were
// refused: ..." for anything `tbd run` would refuse before running.
PassedRunOptions parse_run_options(const std::vector<std::string>& tokens, const std::string& workload,
                                   const PassThrough& pass);

}  // namespace tbd::cli
