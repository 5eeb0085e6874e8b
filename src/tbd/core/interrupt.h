// SIGINT (Ctrl-C) and SIGTERM (`timeout`, Slurm's time limit, a container
// stop) end the measured window early, at the next iteration boundary; the
// run still writes a valid result marked partial and exits 128 + the signal
// (130, 143). A second signal is absorbed: a double press, or one signal
// reaching a run from both a terminal and a launcher. The third ends the
// process at once, by that signal, with no result; while a result file is
// being written (output/result_file.h) it waits for the rename, so it never
// leaves a half-written one or a temporary. docs/architecture.md#what-survives-what.
#pragma once

namespace tbd {

void install_interrupt_handler();  // SIGINT and SIGTERM
bool interrupt_requested();
int interrupt_signal();  // the first signal received (SIGINT, SIGTERM), 0 when none
int interrupt_count();   // signals received so far
// 128 + interrupt_signal() (130, 143), or 0 when no signal came.
int interrupted_exit_status();
// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int signal);
void request_interrupt(int signal = 2);  // what the handler does (2: SIGINT); tests call it directly
void clear_interrupt();

// While one is alive, a signal that abandons the run is held until its end.
class AbandonDeferred {
 public:
  AbandonDeferred();
  ~AbandonDeferred();
  AbandonDeferred(const AbandonDeferred&) = delete;
  AbandonDeferred& operator=(const AbandonDeferred&) = delete;
};

}  // namespace tbd
