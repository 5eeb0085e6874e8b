// What machine and software produced a result (recorded in every result).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

nlohmann::json capture_environment();

// One line for `tbd --version`: tbd's version and git revision, LibTorch's.
std::string version_text();

}  // namespace tbd
