// The statistics of `tbd compare`: a rank test on two samples of iteration
// times and a confidence interval of the ratio of their medians.
// Definitions and references in docs/metrics.md.
#pragma once

#include <vector>

namespace tbd {

// Standard normal distribution.
double normal_cdf(double z);
double normal_quantile(double p);  // p in (0, 1)

// Two-sided Mann–Whitney U test of `base` against `candidate` by the normal
// approximation with the tie correction of the variance and a continuity
// correction of 0.5 (scipy.stats.mannwhitneyu(method="asymptotic")).
struct MannWhitney {
  double u_base = 0;       // U of the base sample: pairs (b, c) with b > c, ties counted ½
  double u_candidate = 0;  // pairs with c > b, ties ½; u_base + u_candidate = n1·n2
  double z = 0;            // |U − n1·n2/2| − ½ over its standard deviation (≥ 0)
  double p_value = 1;      // two-sided; 1 when every value ties
  // Effect size: the probability that a candidate value exceeds a base
  // value (ties count ½), and the rank-biserial correlation 2·P − 1.
  double probability_candidate_greater = 0.5;
  double rank_biserial = 0;
};
MannWhitney mann_whitney_u(const std::vector<double>& base, const std::vector<double>& candidate);

// Ratio median(candidate) / median(base) with a (1 − alpha) confidence
// interval by Price and Bonett's method: the log of each median gets the
// McKean–Schrader standard error from a pair of order statistics, the
// interval is exp(ln ratio ± z·sqrt(se₁² + se₂²)). Needs values > 0 and at
// least 2 per sample; otherwise `has_interval` is false and low = high = ratio.
struct RatioOfMedians {
  double ratio = 0, low = 0, high = 0;
  bool has_interval = false;
};
RatioOfMedians ratio_of_medians(const std::vector<double>& base, const std::vector<double>& candidate,
                                double alpha = 0.05);

// The standard error of ln(median) used above (exposed for tests).
double log_median_standard_error(std::vector<double> values);

}  // namespace tbd
