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
  double p_value = 1;     // two-sided; 1 when both samples are constant and equal
  bool valid = false;     // at least 2 values on each side
};
WelchTest welch_t_test(const std::vector<double>& base, const std::vector<double>& candidate);

// One side of a comparison: per process (result file), the time per sample
// of each of its repetitions (seconds per sample, > 0).
using RepetitionTimes = std::vector<std::vector<double>>;

// The hierarchical comparison (Kalibera and Jones 2013): the unit is the
// process when both sides have at least two, else the repetition. A unit's
// figure is the log of its time per sample; Welch's test on those logs gives
// the p-value, and exp of the difference and of its t interval the ratio of
// (geometric mean) time per sample new / base with its confidence interval.
struct HierarchicalComparison {
  std::string unit;              // "process" or "repetition"
  size_t n_base = 0, n_new = 0;  // units
  double ratio = 0, low = 0, high = 0;  // time per sample new / base: > 1 is slower
  bool has_interval = false;
  double p_value = 1, df = 0;
  double log_sd = 0;                    // pooled sd of the log unit figures (≈ the units' CV)
  double base_seconds_per_sample = 0, new_seconds_per_sample = 0;  // geometric means
};
HierarchicalComparison compare_hierarchical(const RepetitionTimes& base, const RepetitionTimes& candidate,
                                            double alpha);

// Units per side for a two-sided test at `alpha` to detect a change of
// `threshold` (0.05 = 5%) with 80% power, given the log-scale sd of the
// units (normal approximation, plus one for the t distribution; at least 3).
int64_t units_needed(double log_sd, double threshold, double alpha);

}  // namespace tbd
