// The human summary of a run, printed after it ends.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tbd {

void print_summary(std::ostream& out, const nlohmann::json& result,
                   const std::vector<std::pair<std::string, std::string>>& probe_lines);

// 25557032 -> "25,557,032"
std::string with_thousands(long long value);

}  // namespace tbd
