#include "tbd/dist/local_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tbd/core/child_process.h"
#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"

namespace tbd {
namespace {

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  std::string out_partial, err_partial;  // bytes after the last newline
  bool running = true;
  int status = 0;
};

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Relays whole lines; rank 0's stdout passes through untouched (so --json works).
void relay(Worker& w, bool is_stdout, const char* data, size_t size, bool flush) {
  std::string& buffer = is_stdout ? w.out_partial : w.err_partial;
  buffer.append(data, size);
  const bool raw = is_stdout && w.rank == 0;
  size_t start = 0;
  for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string line = buffer.substr(start, nl - start + 1);
    if (raw)
      write_all(STDOUT_FILENO, line);
    else
      write_all(STDERR_FILENO, "[rank " + std::to_string(w.rank) + "] " + line);
  }
  buffer.erase(0, start);
  if (flush && !buffer.empty()) {
    relay(w, is_stdout, "\n", 1, false);
  }
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended (status " + std::to_string(status) + ")";
}

pid_t spawn(const std::vector<std::string>& args, int rank, int nproc, int port, int out_fd, int err_fd) {
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(std::string("cannot start worker process: ") + std::strerror(errno));
  if (pid != 0) return pid;
  // Child: die with the launcher, wire the pipes, set the rendezvous
  // variables, become tbd again.
  die_with_parent(launcher);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  setenv(kLauncherVariable, std::to_string(launcher).c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "cannot start worker: %s\n", std::strerror(errno));
  _exit(127);
}

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

// How a worker ended after the launcher forwarded SIGINT or SIGTERM to it:
// by its partial result (exit 130 or 143), or by the signal itself.
bool ended_by_interrupt(int status) {
  return exited_with(status, 128 + SIGINT) || exited_with(status, 128 + SIGTERM) ||
         (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM));
}

}  // namespace

int free_local_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw Error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool launched_by_local_launcher() {
  const char* launcher = std::getenv(kLauncherVariable);
  return launcher && std::atol(launcher) == static_cast<long>(getppid());
}

int run_local_workers(const std::vector<std::string>& args, int nproc) {
  if (nproc < 1 || nproc > kMaxLocalWorkers)
    throw UsageError("the local launcher starts 1 to " + std::to_string(kMaxLocalWorkers) + " ranks on this machine, " +
                     "asked for " + std::to_string(nproc) +
                     "; start a larger world with torchrun or Slurm (docs/distributed.md), or plan it with "
                     "`tbd plan --nproc N` and `tbd predict --nproc N --bus-gbps B`, which start no ranks");
  const int port = free_local_port();
  std::vector<Worker> workers(static_cast<size_t>(nproc));
  // SIGINT and SIGTERM are counted (core/interrupt.h) and forwarded to
  // every rank, which then agree to stop and write a partial result; the
  // third abandons the run (this process ends, and the ranks with it).
  install_interrupt_handler();
  // Every signal this process received, also those before the child started:
  // tbd installs its handler first thing (cli/main.cpp), so a Ctrl-C during
  // start-up reaches the run instead of being lost.
  int forwarded = 0;
  for (int r = 0; r < nproc; ++r) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
      throw Error(std::string("cannot create pipes for the workers: ") + std::strerror(errno));
    Worker& w = workers[static_cast<size_t>(r)];
    w.rank = r;
    w.pid = spawn(args, r, nproc, port, out[1], err[1]);
    ::close(out[1]);
    ::close(err[1]);
    w.out_fd = out[0];
    w.err_fd = err[0];
  }

  int first_failure = -1;  // index of the first worker that failed
  auto term_deadline = std::chrono::steady_clock::time_point::max();
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  int running = nproc;
  while (running > 0) {
    for (; forwarded < interrupt_count(); ++forwarded)
      for (auto& w : workers)
        if (w.running) kill(w.pid, interrupt_signal());
    std::vector<pollfd> fds;
    std::vector<std::pair<Worker*, bool>> owners;
    for (auto& w : workers) {
      if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0}), owners.emplace_back(&w, true);
      if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0}), owners.emplace_back(&w, false);
    }
    if (!fds.empty() && poll(fds.data(), fds.size(), 100) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[65536];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
        auto [w, is_out] = owners[i];
        if (n > 0) {
          relay(*w, is_out, buf, static_cast<size_t>(n), false);
        } else if (n == 0 || errno != EINTR) {
          relay(*w, is_out, "", 0, true);
          ::close(fds[i].fd);
          (is_out ? w->out_fd : w->err_fd) = -1;
        }
      }
    } else if (fds.empty()) {
      usleep(20000);
    }
    // Reap; among workers failing in the same pass, blame one that was
    // killed (its peers then fail because it is gone), else the lowest rank.
    int newly_failed = -1;
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = workers[i];
      if (!w.running) continue;
      int status = 0;
      if (waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.running = false;
      w.status = status;
      --running;
      if (exited_with(status, 0)) continue;
      if (interrupt_requested() && ended_by_interrupt(status)) continue;  // what we asked for, not a failure
      if (newly_failed < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(workers[static_cast<size_t>(newly_failed)].status)))
        newly_failed = static_cast<int>(i);
    }
    if (newly_failed >= 0 && first_failure < 0) {
      // One rank is gone: the run cannot finish. The others notice at their
      // next collective and say so themselves; those that have not ended
      // after a grace period are stopped.
      first_failure = newly_failed;
      term_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      stop_deadline = term_deadline + std::chrono::seconds(3);
    }
    if (std::chrono::steady_clock::now() > term_deadline) {
      // SIGCONT too: a stopped (frozen) rank would otherwise hold its SIGTERM
      // until the SIGKILL.
      for (auto& w : workers)
        if (w.running) kill(w.pid, SIGTERM), kill(w.pid, SIGCONT);
      term_deadline = std::chrono::steady_clock::time_point::max();
    }
    if (std::chrono::steady_clock::now() > stop_deadline)
      for (auto& w : workers)
        if (w.running) kill(w.pid, SIGKILL);
  }
  // Drain what is left in the pipes.
  for (auto& w : workers) {
    for (int* fd : {&w.out_fd, &w.err_fd}) {
      if (*fd < 0) continue;
      char buf[65536];
      ssize_t n;
      while ((n = ::read(*fd, buf, sizeof(buf))) > 0) relay(w, fd == &w.out_fd, buf, static_cast<size_t>(n), false);
      relay(w, fd == &w.out_fd, "", 0, true);
      ::close(*fd);
    }
  }
  if (first_failure < 0) {
    if (!interrupt_requested()) return 0;
    std::fprintf(stderr, "tbd: interrupted by %s; the ranks stopped%s\n", signal_name(interrupt_signal()),
                 exited_with(workers[0].status, 128 + interrupt_signal()) ? " and rank 0 wrote a partial result" : "");
    return interrupted_exit_status();
  }
  const Worker& w = workers[static_cast<size_t>(first_failure)];
  std::fprintf(stderr, "tbd: error: rank %d of %d %s; the other ranks were stopped\n", w.rank, nproc,
               describe(w.status).c_str());
  return WIFEXITED(w.status) && WEXITSTATUS(w.status) == 2 ? 2 : 1;
}

}  // namespace tbd
