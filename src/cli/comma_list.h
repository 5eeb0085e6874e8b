// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of the command line
// (--probes, --workloads). Empty items are dropped.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tbd::cli {

inline std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace tbd::cli
