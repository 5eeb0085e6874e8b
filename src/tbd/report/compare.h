// `tbd compare`: runs of two result sets matched by configuration, each pair
// judged by a Mann–Whitney U test on the iteration times and the ratio of
// median iteration times against a threshold. Definitions in docs/metrics.md.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/compare_statistics.h"
#include "tbd/report/result_set.h"

namespace tbd {

struct CompareOptions {
  double threshold = 0.05;  // a change smaller than this share of the base median is no change
  double alpha = 0.05;      // significance level of the U test (and 1 − level of the ratio's CI)
};

struct ComparedRun {
  std::string label, key;
  std::vector<std::string> base_files, new_files;
  size_t n_base = 0, n_new = 0;           // iterations (runs of one configuration are pooled)
  double median_base_s = 0, median_new_s = 0;
  RatioOfMedians ratio;                   // median(new) / median(base) of iteration time: > 1 is slower
  MannWhitney test;
  std::string verdict;                    // "faster", "slower" or "no significant change"
  std::string note;                       // why, when the verdict needs explaining
};

struct Comparison {
  CompareOptions options;
  std::vector<ComparedRun> runs;
  std::vector<std::string> only_in_base, only_in_new;  // configuration labels without a partner
  std::vector<std::string> warnings;                   // environments that differ, partial runs
  bool regression() const;                             // any "slower"
};

// Throws Error when no configuration appears on both sides (naming both paths).
Comparison compare_results(const ResultSet& base, const ResultSet& candidate, const CompareOptions& options,
                           const std::string& base_path, const std::string& new_path);

void print_comparison(std::ostream& out, const Comparison& comparison);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace tbd
