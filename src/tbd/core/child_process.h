// Children of tbd (the ranks of `tbd run --nproc`, the runs of a suite or a
// sweep) die with their parent: a parent killed by SIGKILL cannot stop them
// itself, and an orphan that goes on training contaminates every later
// measurement on the machine and keeps writing into the results folder.
#pragma once

#include <sys/types.h>

namespace tbd {

// Call in the child between fork() and exec(), with the parent's pid taken
// before the fork. The kernel sends the child SIGKILL when the parent dies
// (PR_SET_PDEATHSIG, kept across exec); if the parent died before that was
// set, the child exits at once. The child also gets a process group of its
// own, so a Ctrl-C at the terminal reaches only the parent, which forwards
// it once (measure/interrupt.h counts signals).
void die_with_parent(pid_t parent);

}  // namespace tbd
