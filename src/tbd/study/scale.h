// `tbd scale`: data-parallel scaling. Each process count runs as
// `tbd run WORKLOAD --nproc N` (local workers); against the first count n0,
// speed-up = t(n) / t(n0) and scaling efficiency = t(n)·n0 / (n·t(n0)), t
// being the throughput across all processes.
//
// run_scale drives the runs; the counts, the figures and the table are the
// pure functions below, tested without starting a run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tbd/study/passed_options.h"
#include "tbd/study/study_outcome.h"

namespace tbd {

// "1,2,4" -> {1, 2, 4}. Throws UsageError for anything but counts in [1, 1024].
std::vector<int> parse_process_counts(const std::string& text);

struct ScalingFigures {
  double speedup = 0;     // t(n) / t(n0); 0 without a baseline
  double efficiency = 0;  // t(n)·n0 / (n·t(n0)); 0 without a baseline
};

// The figures of `nproc` processes at throughput `rate`, against the
// baseline of `baseline_nproc` processes at `baseline_rate`.
ScalingFigures scaling_figures(int nproc, double rate, int baseline_nproc, double baseline_rate);

// The table: its header, one row per process count, and what the figures mean.
std::string scale_table_header();
std::string scale_table_row(int nproc, double rate, const ScalingFigures& figures);
std::string scale_table_footer(const std::string& unit, int baseline_nproc);

struct ScaleRequest {
  std::string workload;
  std::vector<int> counts;     // parse_process_counts'
  PassedRunOptions run;        // the `tbd run` options of every run, parsed once
  std::string out;             // the tbd.scale/1 result, with every run inside; empty: none
  bool oversubscribe = false;  // run counts beyond this machine's CPUs or memory
  std::string program;         // this tbd, which the runs execute
};

// Runs the process counts in turn (the table's rows on `human` as they
// finish) and writes the scaling result to `out`. Throws UsageError when
// the workload cannot run data-parallel or the counts do not fit this
// machine, Error when a run fails. Exit status 0.
StudyOutcome run_scale(const ScaleRequest& request, std::ostream& human);

}  // namespace tbd
