// `tbd run --nproc N`: starts N worker processes of this same binary with
// torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port), streams their output
// (rank 0's stdout unchanged, everything else prefixed "[rank r]" on
// stderr), forwards Ctrl-C, and ends the others as soon as one fails.
#pragma once

#include <string>
#include <vector>

namespace tbd {

// Returns the exit status for the whole run: 0 when every worker exited 0,
// otherwise the first failing worker's status (at least 1), after printing
// which rank failed and how.
int run_local_workers(const std::vector<std::string>& args, int nproc);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace tbd
