// What a study (sweep, suite, scale) hands back to the command that ran it.
#pragma once

#include <nlohmann/json.hpp>

namespace tbd {

struct StudyOutcome {
  nlohmann::json document;  // what the study wrote: sweep.json, index.json, the scaling result
  int exit_status = 0;      // the command's exit status
};

}  // namespace tbd
