#include "tbd/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace tbd {

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double student_t_975(int64_t df) {
  static const double table[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                                 2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                                 2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return std::nan("");
  if (df <= 30) return table[df - 1];
  // Cornish-Fisher expansion around the normal quantile; error < 1e-5 for df > 30.
  const double z = 1.959963984540054, v = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  s.mean = mean_of(v);
  s.median = percentile(v, 0.5);
  s.stddev = stddev_of(v);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.p5 = percentile(v, 0.05);
  s.p95 = percentile(v, 0.95);
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
  s.ci95_low = s.ci95_high = s.mean;
  if (s.n >= 2) {
    const double half = student_t_975(s.n - 1) * s.stddev / std::sqrt(static_cast<double>(s.n));
    s.ci95_low = s.mean - half;
    s.ci95_high = s.mean + half;
  }
  return s;
}

RatioEstimate ratio_of_totals(const std::vector<double>& y, const std::vector<double>& x) {
  if (y.size() != x.size()) throw std::invalid_argument("ratio_of_totals: sizes differ");
  RatioEstimate r;
  const double sy = std::accumulate(y.begin(), y.end(), 0.0);
  const double sx = std::accumulate(x.begin(), x.end(), 0.0);
  if (x.empty() || sx <= 0) return r;
  r.value = sy / sx;
  r.ci95_low = r.ci95_high = r.value;
  const size_t n = x.size();
  if (n < 2) return r;
  const double xbar = sx / static_cast<double>(n);
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += (y[i] - r.value * x[i]) * (y[i] - r.value * x[i]);
  const double var = ss / (static_cast<double>(n - 1) * static_cast<double>(n) * xbar * xbar);
  const double half = student_t_975(static_cast<int64_t>(n) - 1) * std::sqrt(var);
  // A rate of non-negative totals is never negative: clamp the lower bound
  // (with few iterations the symmetric interval can cross zero).
  r.ci95_low = std::max(0.0, r.value - half);
  r.ci95_high = r.value + half;
  return r;
}

}  // namespace tbd
