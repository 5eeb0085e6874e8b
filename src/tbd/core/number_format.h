// The one way tbd writes numbers for people: summaries, tables, reports.
#pragma once

#include <string>

namespace tbd {

std::string format_number(double v);              // 4 significant digits, "-" for NaN
std::string format_ms(double seconds);            // "12.34 ms"
std::string format_percent(double share);         // 0.123 -> "12.3%"
std::string format_signed_percent(double share);  // -0.05 -> "-5.0%", 0.05 -> "+5.0%"
std::string format_bytes(double bytes);           // "12.3 MiB", "-" when negative, NaN or infinite
std::string with_thousands(long long value);      // 8030261248 -> "8,030,261,248"

}  // namespace tbd
