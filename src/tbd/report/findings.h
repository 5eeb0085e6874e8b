// A few sentences per run saying what its figures mean, computed from the
// result (never canned): where the iteration's time goes, what bounds the
// operators and how far they are from their ceilings, where memory goes,
// what the input pipeline and the all-reduce cost, and whether the machine
// was quiet enough to trust the numbers. A sentence whose figures are
// missing is left out.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

std::vector<std::string> findings_of(const nlohmann::json& result);

// The bound with the most time in a roofline `seconds_by_bound` object and
// its share of their sum; {"", 0} when it holds no time.
std::pair<std::string, double> dominant_bound(const nlohmann::json& seconds_by_bound);

}  // namespace tbd
