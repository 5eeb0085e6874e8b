#include "tbd/measure/interrupt.h"

#include <atomic>
#include <csignal>

namespace tbd {
namespace {
std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // the next Ctrl-C ends the process
}
}  // namespace

void install_interrupt_handler() { std::signal(SIGINT, on_sigint); }
bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }
void request_interrupt() { g_interrupted.store(true); }
void clear_interrupt() { g_interrupted.store(false); }

}  // namespace tbd
