#include "tbd/core/number_format.h"

#include <fmt/format.h>

#include <cmath>

namespace tbd {

std::string format_number(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "-"; }
std::string format_ms(double s) { return std::isfinite(s) ? fmt::format("{:.4g} ms", 1e3 * s) : "-"; }
std::string format_percent(double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", 100 * v) : "-"; }
std::string format_signed_percent(double v) { return std::isfinite(v) ? fmt::format("{:+.1f}%", 100 * v) : "-"; }

std::string format_bytes(long long b) {
  if (b < 0) return "-";
  const double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", v / (1024.0 * 1024 * 1024));
  if (v >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", v / (1024.0 * 1024));
  if (v >= 1024.0) return fmt::format("{:.1f} KiB", v / 1024.0);
  return fmt::format("{} B", b);
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
