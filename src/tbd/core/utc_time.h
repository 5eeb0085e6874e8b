// The current time as ISO 8601 UTC ("2026-12-03T05:51:13Z"), for the
// timestamps results, caches and suite indexes record, and as milliseconds
// since the Unix epoch, the unit of a result's wall_clock and MLPerf's time_ms.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

namespace tbd {

inline int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tbd
