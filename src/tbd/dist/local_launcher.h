// `tbd run --nproc N`: starts N worker processes of this same binary with
// torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port, TBD_LAUNCHER=its pid),
// streams their output (rank 0's stdout unchanged, everything else prefixed
// "[rank r]" on stderr), forwards SIGINT and SIGTERM, and ends the others
// as soon as one fails. The workers die with it (core/child_process.h).
#pragma once

#include <string>
#include <vector>

namespace tbd {

// Set in each worker to the launcher's pid: how a worker that sees --nproc
// and RANK together knows it was started by this launcher, not by torchrun.
inline constexpr const char* kLauncherVariable = "TBD_LAUNCHER";

// Returns the exit status for the whole run: 0 when every worker exited 0;
// 128 + the signal (130, 143) when SIGINT or SIGTERM stopped it; otherwise
// the first failing worker's status (at least 1), after printing which rank
// failed and how.
// At most kMaxLocalWorkers ranks (UsageError beyond).
inline constexpr int kMaxLocalWorkers = 1024;
int run_local_workers(const std::vector<std::string>& args, int nproc);

// True in a worker process started by run_local_workers.
bool launched_by_local_launcher();

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace tbd
