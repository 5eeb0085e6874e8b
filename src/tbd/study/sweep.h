// `tbd sweep`: one child `tbd run` per batch size into a results folder, a
// tbd.sweep/1 index (sweep.json) and a table. `auto` doubles the batch size
// until a run is out of memory: the runner's out-of-memory error, the
// kernel's OOM killer (SIGKILL), or a peak of the memory probe above the
// memory limit (the run would not fit a device with that much memory;
// docs/analysis.md).
//
// run_sweep drives the child runs; the rules it follows (which batch size
// comes next, what a run's outcome makes of its point, when the sweep stops,
// the table) are the pure functions below, tested without starting a run.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/study/child_run.h"
#include "tbd/study/passed_options.h"
#include "tbd/study/study_outcome.h"

namespace tbd {

// "1,2,4,8" -> {1, 2, 4, 8}. Throws UsageError for anything but positive
// whole numbers ("auto" is the caller's).
std::vector<long long> parse_batch_sizes(const std::string& text);

// Which batch sizes a sweep runs: a fixed list, or `auto`: start, 2·start,
// 4·start ... up to max_batch, until one does not fit.
struct SweepPlan {
  bool automatic = true;
  std::vector<long long> sizes;  // the list (automatic: unused)
  long long start = 1, max_batch = 65536;
};

// The batch sizes in the order a sweep runs them, and why it stops.
class BatchSchedule {
 public:
  explicit BatchSchedule(SweepPlan plan);  // throws UsageError for a bad start/max_batch
  // The next batch size, or nullopt when the plan is done (then stopped_by()
  // says why, for `auto`).
  std::optional<long long> next();
  // Records the status of the point just run (sweep_point's) and its run's
  // outcome; false when the sweep stops there: an interruption (of the run,
  // or of the sweep itself: `interrupted`) or an out-of-memory size, as a
  // larger batch would not fit either.
  bool record(const std::string& status, const ChildOutcome& run, bool interrupted);
  // Points of the list that were not run because a smaller size ran out of
  // memory ("skipped"); empty for `auto`.
  std::vector<nlohmann::json> skipped() const;
  // Points the progress display expects, as known so far.
  int expected_points() const;
  const std::string& stopped_by() const { return stopped_by_; }

 private:
  SweepPlan plan_;
  size_t index_ = 0;            // points handed out
  long long next_ = 0;          // auto: the next size; 0 once doubling would pass any size
  long long last_ = 0;          // the size of the last point handed out
  bool stopped_ = false;        // a rule ended the sweep before the plan did
  bool out_of_memory_ = false;  // ... and that rule was out of memory
  std::string stopped_by_;
};

// The memory limit `auto` stops at, and where it came from: the given limit
// (bytes, 0: none given), else on a CPU 75% of `host_bytes` (before the
// kernel's OOM killer would end more than the run), else none (0, "").
struct MemoryLimit {
  long long bytes = 0;
  std::string source;  // "--memory-limit", "75% of this machine's memory" or ""
};
MemoryLimit sweep_memory_limit(bool automatic, long long given_bytes, bool on_cpu, long long host_bytes);

// The options each run is given: `passed`'s tokens, with the memory probe
// added when a limit must be judged and the runs' probes lack it.
std::vector<std::string> sweep_run_options(const PassedRunOptions& passed, const MemoryLimit& limit);

// One point of sweep.json: the run of batch size `batch_size` (its outcome
// `run`, its result document `result`, null when it wrote none, in `file`,
// its log in `log`). A run whose memory peak exceeds `limit` is recorded as
// out of memory without "file" (the caller removes the file, so reports do
// not take it for a fitting run).
nlohmann::json sweep_point(long long batch_size, const ChildOutcome& run, const nlohmann::json& result,
                           const MemoryLimit& limit, const std::string& file, const std::string& log);

// The largest batch size with status "ok"; 0 when none.
long long largest_fitting_batch(const nlohmann::json& points);

// The table of the points, then the verdict and where the results are.
std::string sweep_table(const nlohmann::json& sweep, const std::string& dir);

struct SweepRequest {
  std::string workload;
  SweepPlan plan;
  long long memory_limit_bytes = 0;  // --memory-limit; 0: none given
  PassedRunOptions run;              // the `tbd run` options of every run, parsed once
  std::string out;                   // results folder; empty: sweep-WORKLOAD
  std::string mllog, csv;            // logs every run appends to; empty: none
  std::string program;               // this tbd, which the runs execute
  std::string command;               // the sweep's command line, for the folder's lock
};

// Runs the sweep: checks the request (workload, plan, log paths, folder),
// locks the folder, runs the batch sizes, writes DIR/sweep.json and prints
// the table on `human`. Exit status: 0 some batch size fitted, 1 none did,
// 130/143 stopped by SIGINT/SIGTERM.
StudyOutcome run_sweep(const SweepRequest& request, std::ostream& human);

}  // namespace tbd
