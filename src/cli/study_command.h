// What the study commands (sweep, suite, scale, predict) share.
#pragma once

#include <iostream>
#include <string>

#include "tbd/study/study_outcome.h"

namespace CLI {
class App;
}

namespace tbd::cli {

// --mllog and --csv: the logs every run of a sweep or suite appends to.
void declare_run_logs(CLI::App& cmd, std::string& mllog, std::string& csv);

// The end of a study command: the human text on stdout, or on stderr when
// --json puts the study's document on stdout alone; the study's exit status.

template <class Study>  // StudyOutcome(std::ostream& human)
int run_study(bool json, const Study& study) {
  const StudyOutcome outcome = study(json ? std::cerr : std::cout);
  if (json) std::cout << outcome.document.dump(2) << "\n";
  return outcome.exit_status;
}

}  // namespace tbd::cli
