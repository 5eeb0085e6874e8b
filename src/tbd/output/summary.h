// The human summary of a run, printed after it ends.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tbd/core/number_format.h"  // with_thousands, for its callers

namespace tbd {

void print_summary(std::ostream& out, const nlohmann::json& result,
                   const std::vector<std::pair<std::string, std::string>>& probe_lines);

}  // namespace tbd
