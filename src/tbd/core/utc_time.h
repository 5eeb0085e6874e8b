// The current time as ISO 8601 UTC ("2026-12-03T05:51:13Z"), for the
// timestamps results, caches and suite indexes record.
#pragma once

#include <ctime>
#include <string>

namespace tbd {

inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tbd
