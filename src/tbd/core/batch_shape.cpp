// batch_shape (core/workload.h): the key under which the runner counts the
// batch shapes of warm-up and the timed windows.
#include <string>

#include "tbd/core/workload.h"

namespace tbd {

std::string batch_shape(const Batch& batch) {
  std::string key;
  for (const auto& t : batch.inputs) {
    if (!key.empty()) key += ' ';
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d > 0) key += 'x';
      key += std::to_string(t.size(d));
    }
  }
  return key;
}

}  // namespace tbd
