// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of the command line
// (--probes, --workloads). Empty items are dropped; join_commas is the inverse.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>
#include <string>
#include <vector>

namespace tbd {

inline std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

inline std::string join_commas(const std::vector<std::string>& parts) {
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace tbd
