// Descriptive statistics of iteration times. Definitions in docs/metrics.md.
#pragma once

#include <cstdint>
#include <vector>

namespace tbd {

struct Summary {
  int64_t n = 0;
  double mean = 0, median = 0, stddev = 0;  // stddev: sample (n - 1)
  double min = 0, max = 0, p5 = 0, p95 = 0;
  double ci95_low = 0, ci95_high = 0;  // 95% CI of the mean (Student t); = mean when n < 2
  double cv = 0;                       // stddev / mean
};

Summary summarize(const std::vector<double>& values);

// Linear interpolation between closest ranks (NumPy's default, Hyndman-Fan 7).
// q in [0, 1]; values need not be sorted. Throws on an empty input.
double percentile(std::vector<double> values, double q);

double mean_of(const std::vector<double>& values);
double stddev_of(const std::vector<double>& values);  // sample (n - 1); 0 when n < 2

// Two-sided 95% quantile of Student's t with `df` degrees of freedom.
double student_t_975(int64_t df);

// Ratio of totals R = Σy / Σx with a 95% confidence interval by the delta
// method (ratio estimator): var(R) ≈ Σ(y_i − R·x_i)² / ((n−1)·n·x̄²).
// Used for throughput = samples / seconds when iterations carry different
// sample counts. The lower bound is clamped at 0.
struct RatioEstimate {
  double value = 0, ci95_low = 0, ci95_high = 0;
};
RatioEstimate ratio_of_totals(const std::vector<double>& y, const std::vector<double>& x);

}  // namespace tbd
