// Sweeps and suites run every configuration as a child `tbd run` of this same
// binary, so an out-of-memory error or a crash in one run is recorded and
// the study goes on.
#pragma once

#include <string>
#include <vector>

namespace tbd {

struct ChildOutcome {
  int exit_code = 0;        // the child's exit status; 128 + signal when a signal ended it
  int signal = 0;           // the signal that ended it, 0 when it exited
  bool oom_killed = false;  // SIGKILL while the kernel's out-of-memory killer acted
  double seconds = 0;       // wall time
  std::string error;        // the child's "tbd: error: ..." line, or what ended it; empty on success

  bool ok() const { return exit_code == 0; }
  // Stopped by SIGINT or SIGTERM, it wrote its (partial) result: exit 130 or 143.
  bool interrupted() const { return signal == 0 && (exit_code == 130 || exit_code == 143); }
  // Out of memory: the runner's "out of memory" error, or the kernel's
  // out-of-memory killer (a SIGKILL while /proc/vmstat's oom_kill grew).
  bool out_of_memory() const;
  // Ended by a signal from someone else (a person's kill, a scheduler).
  bool killed() const { return signal != 0 && !oom_killed; }
};

// Runs `args` (args[0]: the program) with stdout and stderr appended to
// `log_path`, and waits for it. The child dies with this process
// (core/child_process.h); SIGINT and SIGTERM this process receives
// (core/interrupt.h) are forwarded to it.
ChildOutcome run_child(const std::vector<std::string>& args, const std::string& log_path);

// "tbd run W --scale tiny" as one line, for logs and error messages.
std::string command_line(const std::vector<std::string>& args);

}  // namespace tbd
