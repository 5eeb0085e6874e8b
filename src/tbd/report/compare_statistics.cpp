#include "tbd/report/compare_statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tbd/measure/statistics.h"

namespace tbd {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must lie in (0, 1)");
  // Bisection on the CDF: slow by numerical standards, exact to 1e-12, and
  // called a handful of times per comparison.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MannWhitney mann_whitney_u(const std::vector<double>& base, const std::vector<double>& candidate) {
  MannWhitney r;
  const double n1 = static_cast<double>(base.size()), n2 = static_cast<double>(candidate.size());
  if (base.empty() || candidate.empty()) return r;
  // Ranks of the pooled sample, ties given their average rank.
  std::vector<std::pair<double, int>> pooled;  // value, 0 = base / 1 = candidate
  for (double v : base) pooled.push_back({v, 0});
  for (double v : candidate) pooled.push_back({v, 1});
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_base = 0, tie_term = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_base += average_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  r.u_base = rank_sum_base - n1 * (n1 + 1) / 2;
  r.u_candidate = n1 * n2 - r.u_base;
  r.probability_candidate_greater = r.u_candidate / (n1 * n2);
  r.rank_biserial = 2 * r.probability_candidate_greater - 1;
  const double n = n1 + n2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return r;  // every value ties: no evidence of a difference
  const double u = std::max(r.u_base, r.u_candidate);
  r.z = std::max(0.0, (u - n1 * n2 / 2 - 0.5) / std::sqrt(variance));
  r.p_value = std::min(1.0, 2 * (1 - normal_cdf(r.z)));
  return r;
}

double log_median_standard_error(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  if (n < 2) return NAN;
  std::sort(v.begin(), v.end());
  // Order statistics Y(c) and Y(n−c+1), c = n/2 − √n rounded to the nearest
  // non-zero integer (Bonett and Price 2002) ...
  const int64_t c = std::max<int64_t>(1, std::llround(static_cast<double>(n) / 2 - std::sqrt(static_cast<double>(n))));
  // ... cover the median with probability 1 − α*, α* = 2·P(Binomial(n, ½) ≤ c − 1);
  double tail = 0;
  for (int64_t k = 0; k < c; ++k)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) - n * std::log(2.0));
  const double z = normal_quantile(1 - tail);  // z of α*/2, α*/2 = tail
  // ... so their distance on the log scale spans 2·z standard errors (McKean–Schrader).
  return (std::log(v[n - c]) - std::log(v[c - 1])) / (2 * z);
}

RatioOfMedians ratio_of_medians(const std::vector<double>& base, const std::vector<double>& candidate,
                                double alpha) {
  RatioOfMedians r;
  if (base.empty() || candidate.empty()) return r;
  const double mb = percentile(base, 0.5), mc = percentile(candidate, 0.5);
  if (!(mb > 0)) return r;
  r.ratio = r.low = r.high = mc / mb;
  const bool positive = std::all_of(base.begin(), base.end(), [](double x) { return x > 0; }) &&
                        std::all_of(candidate.begin(), candidate.end(), [](double x) { return x > 0; });
  if (!positive || base.size() < 2 || candidate.size() < 2) return r;
  const double se_b = log_median_standard_error(base), se_c = log_median_standard_error(candidate);
  const double half = normal_quantile(1 - alpha / 2) * std::sqrt(se_b * se_b + se_c * se_c);
  r.low = r.ratio * std::exp(-half);
  r.high = r.ratio * std::exp(half);
  r.has_interval = true;
  return r;
}

}  // namespace tbd
