// The comma-separated lists of the command line (--probes, --workloads,
// --batch-sizes, scale's --nproc), read and checked in one place.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tbd/core/error.h"

namespace tbd {

// "a,b,c" -> {"a", "b", "c"}; join_commas is the inverse. Throws UsageError
// naming `flag` for an empty list (`--workloads ''` would otherwise mean
// "the default set"), an empty item (`time,,data`: a name lost to a typo)
// and an item given twice (`--nproc 2,1,2` would run a point twice).
// `example` is a valid list for the message ("time,data").
inline std::vector<std::string> list_items(const std::string& text, const std::string& flag,
                                           const std::string& example) {
  const std::string fix = "give the items separated by single commas, e.g. " + flag + " " + example;
  if (text.empty()) throw UsageError(flag + " needs at least one item; " + fix);
  // getline drops a trailing empty item ("a,"), so that one is looked for here.
  if (text.back() == ',') throw UsageError(flag + " '" + text + "' has an empty item; " + fix);
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) throw UsageError(flag + " '" + text + "' has an empty item; " + fix);
    if (std::find(parts.begin(), parts.end(), part) != parts.end())
      throw UsageError(flag + " '" + text + "' names " + part + " twice; give each item once");
    parts.push_back(part);
  }
  return parts;
}

inline std::string join_commas(const std::vector<std::string>& parts) {
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace tbd
