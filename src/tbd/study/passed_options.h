// The `tbd run` options a study (sweep, suite, scale) gives each of its runs.
// The command line parses them once, with `tbd run`'s own declarations
// (cli/run_args.h), so a study reads typed values (the device, the probes)
// instead of looking for tokens, and a bad option is refused before any run
// starts. The tokens are kept as typed: they are what each run is given and
// what the study's index records.
#pragma once

#include <string>
#include <vector>

#include "tbd/core/options.h"

namespace tbd {

struct PassedRunOptions {
  std::vector<std::string> tokens;  // e.g. {"--scale", "tiny", "--probes", "time"}
  RunOptions options;               // the tokens resolved (the workload's name set, no batch size of the study's)
  std::vector<std::string> probes;  // the probes each run uses: --probes with `all` expanded, or the default list
};

}  // namespace tbd
