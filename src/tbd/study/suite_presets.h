// The options `tbd suite --preset quick|paper|gpu` gives each workload's run,
// and how a user's own options are laid over them.
#pragma once

#include <string>
#include <vector>

namespace tbd {

// The preset names suite_preset_options() knows.
std::vector<std::string> suite_preset_names();

// `tbd run` options of `workload` in `preset` (throws UsageError for an
// unknown preset):
//  - quick: every workload at a small scale with few iterations, within
//    about 10 minutes on 2 CPU cores (docs/analysis.md);
//  - paper: TBD's configurations, full scale, the default plan;
//  - gpu: full scale at batch sizes that keep an 80-141 GB GPU busy.
std::vector<std::string> suite_preset_options(const std::string& preset, const std::string& workload);

// `preset` with `overrides` laid over it: a flag given in `overrides`
// replaces the preset's (run options may be given only once); --set accumulates.
std::vector<std::string> merge_options(const std::vector<std::string>& preset,
                                       const std::vector<std::string>& overrides);

}  // namespace tbd
