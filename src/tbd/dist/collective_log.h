// Collectives a model runs inside its own forward and backward (dlrm's
// embedding all-to-alls under --embedding-sharding), timed where they are
// awaited, so the comm probe can report them beside the gradient
// synchronisation. The step blocks on each one, so its whole time is exposed.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

namespace tbd {

struct LoggedCollective {
  const char* kind = "";  // "all-to-all" (a literal: recording allocates nothing in the step)
  double bytes = 0;       // this rank's send buffer (nccl-tests' size of an all-to-all)
  double seconds = 0;     // device-timed (NCCL) or launch to completion on the host (Gloo)
};

class CollectiveLog {
 public:
  // Nothing is kept until a reader (the comm probe) asks for it: a run
  // without one would otherwise grow the log every iteration.
  void start_recording() { recording_ = true; }
  void record(LoggedCollective c);       // dropped unless recording
  std::vector<LoggedCollective> take();  // and forget them

 private:
  std::atomic<bool> recording_{false};
  std::mutex mutex_;  // backward may run on an autograd worker thread
  std::vector<LoggedCollective> entries_;
};

}  // namespace tbd
