#include "tbd/core/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace tbd {

void die_with_parent(pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died between fork() and prctl(): then the child was
  // already re-parented and no signal will come.
  if (getppid() != parent) _exit(1);
}

}  // namespace tbd
