#include "tbd/core/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace tbd {
namespace {
std::atomic<int> g_signal{0};  // the first one
std::atomic<int> g_count{0};
bool g_tell = false;  // stderr is a terminal: say what the signal does

// Signals that abandon the run: the third one, counting the first.
constexpr int kAbandonAt = 3;

std::atomic<int> g_deferring{0};        // live AbandonDeferred guards
std::atomic<int> g_abandon_pending{0};  // the signal that came while deferring

void say(const char* text) {
  if (g_tell && ::write(STDERR_FILENO, text, std::strlen(text)) < 0) {
  }
}

// Ends the process by `sig` itself, so its parent sees what ended it.
void abandon(int sig) {
  say("\ntbd: abandoned (third signal)\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

extern "C" void on_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  const int count = g_count.fetch_add(1) + 1;
  if (count >= kAbandonAt) {
    if (g_deferring.load() > 0)
      g_abandon_pending.store(sig);
    else
      abandon(sig);
    return;
  }
  if (count == 1)
    say("\ntbd: stopping after the current iteration to write a partial result "
        "(interrupt twice more to abandon the run)\n");
}
}  // namespace

void install_interrupt_handler() {
  g_tell = isatty(STDERR_FILENO) == 1;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // Restarted system calls: a read in a data loader or a Gloo socket must not
  // fail with EINTR. Parents waiting for children poll instead (study/child_run.cpp).
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() { return g_count.load(std::memory_order_relaxed) > 0; }
int interrupt_signal() { return g_signal.load(); }
int interrupt_count() { return g_count.load(); }
int interrupted_exit_status() { return g_signal.load() == 0 ? 0 : 128 + g_signal.load(); }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

void request_interrupt(int signal) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signal);
  g_count.fetch_add(1);
}

void clear_interrupt() {
  g_signal.store(0);
  g_count.store(0);
}

AbandonDeferred::AbandonDeferred() { g_deferring.fetch_add(1); }

AbandonDeferred::~AbandonDeferred() {
  if (g_deferring.fetch_sub(1) == 1)
    if (const int sig = g_abandon_pending.exchange(0); sig != 0) abandon(sig);
}

}  // namespace tbd
