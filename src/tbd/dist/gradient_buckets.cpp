#include "tbd/dist/gradient_buckets.h"

namespace tbd {

std::vector<std::vector<size_t>> assign_gradient_buckets(const std::vector<GradientShape>& shapes,
                                                         int64_t bucket_bytes) {
  std::vector<std::vector<size_t>> buckets;
  int64_t elements = 0;  // in the open bucket
  for (size_t k = shapes.size(); k-- > 0;) {
    const auto& p = shapes[k];
    if (p.sparse) continue;
    bool fits = false;
    if (!buckets.empty()) {
      const auto& first = shapes[buckets.back().front()];
      fits = first.kind == p.kind && (elements + p.elements) * p.element_size <= bucket_bytes;
    }
    if (!fits) {
      buckets.emplace_back();
      elements = 0;
    }
    buckets.back().push_back(k);
    elements += p.elements;
  }
  return buckets;
}

}  // namespace tbd
