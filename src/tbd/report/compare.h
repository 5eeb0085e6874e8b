// `tbd compare`: runs of two result sets matched by configuration (or, with
// --ab, one configuration against another), each pair judged on
// repetition-level (or process-level) time per sample: Welch's test on the
// logs and the ratio with its confidence interval, against a threshold.
// Definitions in docs/metrics.md#compare.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/compare_statistics.h"
#include "tbd/report/result_set.h"

namespace tbd {

struct CompareOptions {
  double threshold = 0.05;  // a change smaller than this share is no change
  double alpha = 0.05;      // significance level (and 1 − level of the ratio's CI)
  // An explicit A/B: each side holds one configuration and the two are
  // compared although they differ (--threads 1 against 2, say).
  bool ab = false;
};

struct ComparedRun {
  std::string label, key;
  std::vector<std::string> base_files, new_files;
  std::vector<std::string> differences;  // --ab: what differs between the sides
  HierarchicalComparison stats;
  std::string unit;  // the workload's sample unit ("images")
  // "slower", "faster", "no significant change" or "inconclusive".
  std::string verdict;
  std::string note;         // why, when the verdict needs explaining
  int64_t needed = 0;       // inconclusive: units per side a verdict needs
  std::string needed_unit;  // of `needed`: "repetition" or "process" (result files)
};

struct Comparison {
  CompareOptions options;
  std::vector<ComparedRun> runs;
  std::vector<std::string> only_in_base, only_in_new;  // configuration labels without a partner
  std::vector<std::string> warnings;                   // environments that differ, partial runs
  bool regression() const;                             // any "slower"
};

// Throws UsageError when the inputs cannot be compared: no configuration on
// both sides (naming both paths and what each holds), or --ab with more than
// one configuration on a side.
Comparison compare_results(const ResultSet& base, const ResultSet& candidate, const CompareOptions& options,
                           const std::string& base_path, const std::string& new_path);

// The time per sample of each repetition of one result (seconds per sample),
// from throughput.repetitions, or the whole run as one repetition when absent.
std::vector<double> repetition_seconds_per_sample(const nlohmann::json& result);

void print_comparison(std::ostream& out, const Comparison& comparison);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace tbd
