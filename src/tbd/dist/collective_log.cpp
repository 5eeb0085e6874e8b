#include "tbd/dist/collective_log.h"

#include <utility>

namespace tbd {

void CollectiveLog::record(LoggedCollective c) {
  if (!recording_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(std::move(c));
}

std::vector<LoggedCollective> CollectiveLog::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(entries_, {});
}

}  // namespace tbd
