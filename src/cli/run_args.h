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
}

namespace tbd::cli {

// What CLI11 collects for `tbd run`, before validation.
struct RunArgs {
  RunOptions options;
  bool oversubscribe = false;
  std::string precision = "fp32", scale = "full", warmup = "5", probes;  // probes: the default list
  std::string overlap = "on", optimizer_impl = "fused", memory_format = "auto", host_allocator = "retain";
  std::vector<std::string> settings;
  bool batch_size_given = false;  // set after parsing: --batch-size 0 is a mistake, its absence is not
  TraceRequest trace;
  std::string mllog, csv;  // logs other tools read (docs/analysis.md)

  RunArgs();
};

// Every option of `tbd run` except the workload (a positional of `tbd run`,
// a study's own argument) on `app`, writing into `args`.
void declare_run_options(CLI::App& app, RunArgs& args);

// Turns the strings CLI11 collected into validated options (throws UsageError).
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
