// The human text of a prediction document (tbd.prediction/1): one block per
// prediction, with its check. tbd predict prints it.
#pragma once

#include <ostream>

#include <nlohmann/json_fwd.hpp>

namespace tbd {

void print_prediction(std::ostream& os, const nlohmann::json& doc);

}  // namespace tbd
