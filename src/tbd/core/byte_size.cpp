#include "tbd/core/byte_size.h"

#include <cctype>
#include <optional>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"

namespace tbd {

long long parse_byte_size(const std::string& text, const std::string& flag) {
  // The unit is the trailing letters ("1e3" has none: the 'e' is the number's).
  const size_t last_digit = text.find_last_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  const size_t used = last_digit == std::string::npos ? 0 : last_digit + 1;
  const std::optional<double> value = real_from_text(text.substr(0, used));
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
  // Past 2^62 bytes (4 EiB) is no machine's memory, and past 2^63 the
  // conversion to long long would be undefined.
  if (!value || scale == 0 || !(*value > 0) || !(*value * scale < 0x1p62))
    throw UsageError(flag + " takes a size such as 512M, 8G or 1073741824 (bytes); got '" + text + "'");
  return static_cast<long long>(*value * scale);
}

}  // namespace tbd
