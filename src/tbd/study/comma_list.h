// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of the command line
// (--probes, --workloads). Empty items are dropped; join_commas is the inverse.
#pragma once

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
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ",") + p;
  return text;
}

}  // namespace tbd
