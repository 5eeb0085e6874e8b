// The batch size at which memory runs out, from one result's memory
// breakdown at its peak (docs/metrics.md#prediction):
//   peak(b) = fixed + per_sample · b,
// fixed = weights + weight gradients + optimizer state (independent of the
// batch), per_sample = (peak − fixed) / the base's batch size. Predicted: the
// largest batch that fits `limit_bytes`, and the first batch of tbd sweep's
// doubling sequence (start, 2·start, ...) whose peak exceeds it.
#pragma once

#include <nlohmann/json.hpp>

namespace tbd {

// Throws Error when the base has no memory section (the memory probe).
nlohmann::json predict_memory_limit(const nlohmann::json& base, long long limit_bytes, long long start = 1);

}  // namespace tbd
