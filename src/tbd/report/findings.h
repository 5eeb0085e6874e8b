// A few sentences per run saying what its figures mean, computed from the
// result (never canned): where the iteration's time goes, what bounds the
// operators and how far they are from their ceilings, where memory goes,
// what the input pipeline and the all-reduce cost, and whether the machine
// was quiet enough to trust the numbers. A sentence whose figures are
// missing is left out.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

std::vector<std::string> findings_of(const nlohmann::json& result);

}  // namespace tbd
