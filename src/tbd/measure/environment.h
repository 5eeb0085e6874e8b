// What machine and software produced a result (recorded in every result).
#pragma once

#include <nlohmann/json.hpp>

namespace tbd {

nlohmann::json capture_environment();

}  // namespace tbd
