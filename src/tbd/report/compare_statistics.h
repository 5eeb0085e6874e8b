// The statistics of `tbd compare`: runs are compared at the level of
// repetitions (or processes), never single iterations, which are
// autocorrelated within a run and carry none of the run-to-run variance.
// Method and references in docs/metrics.md#compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

// Standard normal distribution.
double normal_cdf(double z);
double normal_quantile(double p);  // p in (0, 1)

// Student's t distribution with `df` > 0 (not necessarily integer) degrees of
// freedom, through the regularised incomplete beta function.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);  // p in (0, 1)

// Welch's two-sample t test (unequal variances, Welch–Satterthwaite degrees
// of freedom) of mean(candidate) − mean(base); scipy.stats.ttest_ind(...,
// equal_var=False) gives the same t, df and two-sided p.
struct WelchTest {
  double difference = 0;  // mean(candidate) − mean(base)
  double standard_error = 0;
  double df = 0;
  double t = 0;
  double p_value = 1;  // two-sided; 1 when both samples are constant and equal
  bool valid = false;  // at least 2 values on each side
};
//
// `unseen_variance` > 0 adds, to each side's variance of its mean
// (s²/n), that many times its own sample variance (s²/n + k·s²): the
// variance of a level the sample could not observe (see
// compare_hierarchical). The Welch–Satterthwaite df still applies, as each
// term stays a multiple of s², with n − 1 degrees of freedom.
WelchTest welch_t_test(const std::vector<double>& base, const std::vector<double>& candidate,
                       double unseen_variance = 0);

// One side of a comparison: per process (result file), the time per sample
// of each of its repetitions (seconds per sample, > 0).
using RepetitionTimes = std::vector<std::vector<double>>;

// The hierarchical comparison (Kalibera and Jones 2013): the unit is the
// process when both sides have at least two, else the repetition. A unit's
// figure is the log of its time per sample; Welch's test on those logs gives
// the p-value, and exp of the difference and of its t interval the ratio of
// (geometric mean) time per sample new / base with its confidence interval.
//
// With repetitions as the unit, the variance between processes (another
// launch, another memory layout, another moment on a shared machine) is
// in neither side's sample, yet it moves a side's mean as a whole. The test
// then assumes it equals the variance between repetitions (Kalibera and
// Jones found the two levels comparable; measured on the development VM
// it was 1.4–1.6 times as large) and adds it: kProcessAllowance.
constexpr double kProcessAllowance = 1.0;

struct HierarchicalComparison {
  std::string unit;                     // "process" or "repetition"
  size_t n_base = 0, n_new = 0;         // units
  double ratio = 0, low = 0, high = 0;  // time per sample new / base: > 1 is slower
  bool has_interval = false;
  double p_value = 1, df = 0;
  double log_sd = 0;                   // pooled sd of the log unit figures (≈ the units' CV)
  double repetitions_per_process = 0;  // mean over the files of both sides
  // Repetitions as units carry the allowance for the unseen process variance.
  bool process_allowance() const { return unit == "repetition"; }
  double base_seconds_per_sample = 0, new_seconds_per_sample = 0;  // geometric means
};
HierarchicalComparison compare_hierarchical(const RepetitionTimes& base, const RepetitionTimes& candidate,
                                            double alpha);

// Units per side for a two-sided test at `alpha` to detect a change of
// `threshold` (0.05 = 5%) with 80% power, given the log-scale sd of the
// units (normal approximation, plus one for the t distribution; at least 3).
int64_t units_needed(double log_sd, double threshold, double alpha);

// When the comparison was made on repetitions (with the process allowance):
// the repetitions per side that would give 80% power, or 0 when no number of
// repetitions can, the allowance alone being too wide for the threshold.
int64_t repetitions_needed(double log_sd, double threshold, double alpha);
// Then, result files (processes) per side: units_needed of the process-level
// sd the allowance implies, s·√(kProcessAllowance + 1/repetitions per file).
int64_t processes_needed(const HierarchicalComparison& c, double threshold, double alpha);

}  // namespace tbd
