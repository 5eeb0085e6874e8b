#include "tbd/core/number_format.h"

#include <fmt/format.h>

#include <cmath>

namespace tbd {

std::string format_number(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "-"; }
std::string format_ms(double s) { return std::isfinite(s) ? fmt::format("{:.4g} ms", 1e3 * s) : "-"; }
std::string format_percent(double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", 100 * v) : "-"; }
std::string format_signed_percent(double v) { return std::isfinite(v) ? fmt::format("{:+.1f}%", 100 * v) : "-"; }

std::string format_bytes(double b) {
  if (!(b >= 0) || std::isinf(b)) return "-";  // negative, NaN or infinite: not a measurement
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

std::string with_thousands(long long value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace tbd
