// `tbd predict`'s human-readable output: each prediction of a
// tbd.prediction/1 document on its own lines, with its check.
#pragma once

#include <ostream>

#include <nlohmann/json_fwd.hpp>

namespace tbd {

// Reads the document with read_prediction_document, so a missing or
// wrongly-typed field prints as absent (nan, none) instead of throwing.
void print_prediction(std::ostream& os, const nlohmann::json& doc);

}  // namespace tbd
