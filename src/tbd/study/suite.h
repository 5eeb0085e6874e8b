// `tbd suite`: many workloads into one results folder, each as a child
// `tbd run`, with an index file (tbd.suite/1, index.json). A failing run is
// recorded with its error and the suite goes on; a re-run skips the runs the
// index records as completed with the same options (force redoes them).
//
// run_suite drives the child runs; the plan (each workload's options), what
// a run's outcome makes of its index entry, which runs a re-run skips and
// the summary are the pure functions below, tested without starting a run.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/study/child_run.h"
#include "tbd/study/study_outcome.h"

namespace tbd {

// One run of a suite: a workload and every `tbd run` option it is given.
struct SuiteRun {
  std::string workload;
  std::vector<std::string> options;
};

// One --for "W:OPTIONS": the workload and its options split into words as a
// shell would (quotes group words). Throws UsageError for a spec without
// "W:" and, naming `--for W`, for a quote left open.
std::pair<std::string, std::vector<std::string>> read_for_spec(const std::string& spec);

// The runs of a suite: `workloads` (comma-separated; none: every registered
// one; an unknown name throws UsageError listing the known ones, an empty
// list or item or a name given twice throws UsageError too), each with
// the options of `preset`, then `run_options` (for every run), then its own
// (`per_workload`: "W:OPTIONS" specs, e.g. "resnet50:--batch-size 16"), each
// laid over the one before (merge_options). Throws UsageError for an unknown
// preset, a malformed spec, or a spec naming a workload the suite does not run.
std::vector<SuiteRun> plan_suite(const std::string& preset, const std::optional<std::string>& workloads,
                                 const std::vector<std::string>& run_options,
                                 const std::vector<std::string>& per_workload);

// The index at `path`: null when there is none; throws Error when it is not
// valid JSON or not a tbd.suite/1 index (the message says what to do).
nlohmann::json read_suite_index(const std::string& path);

// Whether `earlier` (the index's entry of the same workload) is a completed
// run of `entry`'s options whose result file is still there, so a re-run
// keeps it instead of running it again.
bool completed_earlier(const nlohmann::json& earlier, const nlohmann::json& entry, bool result_exists);

// `entry` (workload, options, file, log, started_utc) completed by its run's
// outcome: seconds, exit status, status (ok, partial, failed, killed) and
// error; a run without a result loses "file". `result` is the result
// document the run wrote, null when none is to be read.
nlohmann::json finish_suite_entry(nlohmann::json entry, const ChildOutcome& run, const nlohmann::json& result);

// Whether the suite stops after this finished entry: its run was
// interrupted (SIGINT/SIGTERM reached it) and kept a (partial) result.
bool suite_stops_after(const nlohmann::json& entry, const ChildOutcome& run);

// The index's runs: this suite's `runs`, then the entries of `earlier` for
// workloads this suite does not run (a suite of some workloads keeps the
// others listed).
nlohmann::json suite_index_runs(const nlohmann::json& runs, const std::map<std::string, nlohmann::json>& earlier,
                                const std::vector<SuiteRun>& plan);

// "suite quick: 3 ok, 1 failed, 0 skipped of 4 runs; index DIR/index.json",
// each failed run with its error, and how to make the report.
std::string suite_summary(const std::string& preset, const nlohmann::json& runs, const std::string& dir);

// Runs that did not complete: status failed or killed (exit status 1).
int failed_runs(const nlohmann::json& runs);

struct SuiteRequest {
  std::string preset;
  std::vector<SuiteRun> runs;            // plan_suite's
  std::vector<std::string> run_options;  // the options given for every run, as typed (the index records them)
  std::string out;                       // results folder; empty: suite-PRESET
  bool force = false;                    // redo runs the index records as completed
  std::string mllog, csv;                // logs every run appends to; empty: none
  std::string program;                   // this tbd, which the runs execute
  std::string command;                   // the suite's command line, for the folder's lock
};

// Runs the suite: checks the log paths and the folder, locks it, runs (or
// keeps) each workload's run, rewrites DIR/index.json after each, and prints
// the summary on `human`. Exit status: 0 every run completed, 1 at least one
// failed, 130/143 stopped by SIGINT/SIGTERM.
StudyOutcome run_suite(const SuiteRequest& request, std::ostream& human);

}  // namespace tbd
