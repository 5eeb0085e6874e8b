#include "tbd/study/child_run.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "tbd/core/child_process.h"
#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"

namespace tbd {

bool ChildOutcome::out_of_memory() const {
  return oom_killed || error.find("out of memory") != std::string::npos ||
         error.find("out of host memory") != std::string::npos;
}

namespace {

// Processes the kernel's out-of-memory killer has ended since boot; -1 when
// unreadable. A SIGKILL with this count unchanged came from someone else.
long long oom_kills_so_far() {
  std::ifstream vmstat("/proc/vmstat");
  std::string key;
  long long value = 0;
  while (vmstat >> key >> value)
    if (key == "oom_kill") return value;
  return -1;
}

}  // namespace

std::string command_line(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t'\"$\\") == std::string::npos;
    line += (line.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return line;
}

ChildOutcome run_child(const std::vector<std::string>& args, const std::string& log_path) {
  ChildOutcome outcome;
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw Error("cannot write the log " + log_path + ": " + std::strerror(errno));
  const std::string header = "$ " + command_line(args) + "\n";
  if (::write(log, header.data(), header.size()) < 0) { /* the run matters more than its log header */
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const long long oom_kills_before = oom_kills_so_far();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    throw Error(std::string("cannot start a child run: ") + std::strerror(errno));
  }
  if (pid == 0) {
    die_with_parent(parent);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    const std::string msg = std::string("tbd: error: cannot start ") + argv[0] + ": " + std::strerror(errno) + "\n";
    if (::write(STDERR_FILENO, msg.data(), msg.size()) < 0) {
    }
    ::_exit(127);
  }
  ::close(log);
  // Poll rather than block: a signal to this process is forwarded within
  // 50 ms, once per signal (the child has its own process group, so a
  // terminal's Ctrl-C reaches it only this way).
  int status = 0;
  // Every signal this process received, also those before the child started:
  // tbd installs its handler first thing (cli/main.cpp), so a Ctrl-C during
  // start-up reaches the run instead of being lost.
  int forwarded = 0;
  for (;;) {
    for (; forwarded < interrupt_count(); ++forwarded) ::kill(pid, interrupt_signal());
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw Error(std::string("lost the child run: ") + std::strerror(errno));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
    outcome.exit_code = 128 + outcome.signal;
    const long long oom_kills_after = oom_kills_so_far();
    outcome.oom_killed = outcome.signal == SIGKILL && (oom_kills_before < 0 || oom_kills_after > oom_kills_before);
    outcome.error = "killed by signal " + std::to_string(outcome.signal) + " (" + strsignal(outcome.signal) + ")";
    if (outcome.oom_killed)
      outcome.error += oom_kills_before < 0
                           ? ", most likely the kernel's out-of-memory killer (/proc/vmstat is unreadable)"
                           : ", by the kernel's out-of-memory killer";
    else
      outcome.error += outcome.signal == SIGKILL
                           ? " from outside, not the out-of-memory killer (/proc/vmstat's oom_kill did not grow)"
                           : " from outside";
    return outcome;
  }
  outcome.exit_code = WEXITSTATUS(status);
  if (outcome.interrupted()) {
    outcome.error = std::string("interrupted by ") + (outcome.exit_code == 130 ? "SIGINT" : "SIGTERM");
  } else if (outcome.exit_code != 0) {
    // The last error line the child printed says why.
    std::ifstream in(log_path);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("tbd: error: ", 0) == 0 || line.rfind("tbd: internal error: ", 0) == 0)
        outcome.error = line.substr(line.find(": ") + 2);
    if (outcome.error.rfind("error: ", 0) == 0) outcome.error = outcome.error.substr(7);
    if (outcome.error.empty())
      outcome.error = "exited with status " + std::to_string(outcome.exit_code) + " (see " + log_path + ")";
  }
  return outcome;
}

}  // namespace tbd
