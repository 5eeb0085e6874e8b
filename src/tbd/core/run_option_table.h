// The options of a run (RunOptions), each declared once: its flag, the key
// that records it in a result (`workload.options`), its help and default,
// how its text is read, and whether it makes the run what it is. From this
// one table come `tbd run`'s flags (cli/run_args.cpp declares each entry),
// the result's JSON (to_json), options read back from a result
// (run_options_from_json) and the flags that make a result's configuration
// again (configuration_arguments: tbd predict's co-located copies and checks).
// An option added here reaches all four; tests/options_test.cpp round-trips
// every entry flags -> RunOptions -> JSON -> flags -> RunOptions.
//
// The options that are not RunOptions fields (--probes, --trace and its
// companions, --mllog, --csv, --oversubscribe: what a run writes or how it
// is launched, never recorded in `workload.options`) are declared in
// cli/run_args.cpp alone.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tbd/core/options.h"

namespace tbd {

struct RunOptionSpec {
  enum class Takes {
    value,    // --iters 4
    values,   // --set a=1 --set b=2: repeatable, each adds
    nothing,  // --json: a switch
  };
  std::string flag;          // "--batch-size"
  std::string json_key;      // "batch_size" in workload.options; empty: not recorded
  std::string help;          // for --help
  std::string default_text;  // shown by --help; empty: none shown
  Takes takes = Takes::value;
  // Part of the configuration: a copy of the run is given it again from its
  // result. Options a caller sets per copy (the distributed ones, the data
  // stream) and the run's outputs are not.
  bool configuration = false;
  bool hidden = false;  // internal (tbd predict's copies); not offered by --help or completion
  // Reads the text given to the flag into `options`; throws UsageError naming
  // the flag. A switch gets "".
  std::function<void(RunOptions& options, const std::string& text)> parse;
  // The value a result records under json_key (JSON); null: nothing recorded
  // for these options. Empty for an option without a json_key.
  std::function<nlohmann::json(const RunOptions& options)> record;
};

// Every RunOptions option, in --help order.
const std::vector<RunOptionSpec>& run_option_table();

// The entry of `flag`; nullptr when no entry has it.
const RunOptionSpec* find_run_option(const std::string& flag);

// The options recorded in a result (`workload.options`) read back through
// the table. Throws Error naming the key when a value is of the wrong type
// or not accepted.
RunOptions run_options_from_json(const nlohmann::json& recorded);

// The flags that make `options`' configuration again: every configuration
// option whose recorded value differs from the default's, as
// {"--scale", "small", "--set", "depth=101", ...}.
std::vector<std::string> configuration_arguments(const RunOptions& options);

}  // namespace tbd
