#include "tbd/core/byte_size.h"

#include <cctype>

#include "tbd/core/error.h"

namespace tbd {

long long parse_byte_size(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  if (used == 0 || scale == 0 || !(value > 0))
    throw UsageError(flag + " takes a size such as 512M, 8G or 1073741824 (bytes); got '" + text + "'");
  return static_cast<long long>(value * scale);
}

}  // namespace tbd
