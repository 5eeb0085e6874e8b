// Numbers read from text as a whole: "12" and "0.5" are numbers, "12x",
// "", " 12" and values out of the type's range are not (std::stoi would read
// "12x" as 12, strtoull would wrap "-1" to 2^64 - 1). Callers phrase their
// own error, naming the option and what it accepts.
#pragma once

#include <optional>
#include <string>

namespace tbd {

// A whole number with an optional leading '-'.
std::optional<long long> integer_from_text(const std::string& text);
// A whole number of digits only (no sign).
std::optional<unsigned long long> unsigned_from_text(const std::string& text);
// A decimal or scientific number ("0.5", "1e-3"); "inf" and "nan" read as
// strtod reads them, so callers that need a finite value check it.
std::optional<double> real_from_text(const std::string& text);

}  // namespace tbd
