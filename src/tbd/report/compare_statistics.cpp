#include "tbd/report/compare_statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "tbd/core/statistics.h"

namespace tbd {
namespace {

// Continued fraction of the regularised incomplete beta function (modified
// Lentz's method), converging for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < kEpsilon) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double variance_of(const std::vector<double>& v) {
  const double s = stddev_of(v);
  return s * s;
}

// The log time per sample of each unit: processes (their repetitions'
// seconds and samples pooled by the geometric mean of their repetitions) or
// every repetition.
std::vector<double> unit_logs(const RepetitionTimes& side, bool by_process) {
  std::vector<double> logs;
  for (const auto& process : side) {
    std::vector<double> reps;
    for (double t : process)
      if (t > 0 && std::isfinite(t)) reps.push_back(std::log(t));
    if (reps.empty()) continue;
    if (by_process)
      logs.push_back(mean_of(reps));
    else
      logs.insert(logs.end(), reps.begin(), reps.end());
  }
  return logs;
}

}  // namespace

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

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("student_t_cdf: df must be positive");
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("student_t_quantile: p must lie in (0, 1)");
  double lo = -1e7, hi = 1e7;
  for (int i = 0; i < 400 && hi - lo > 1e-12 * std::max(1.0, std::abs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

WelchTest welch_t_test(const std::vector<double>& base, const std::vector<double>& candidate, double unseen_variance) {
  WelchTest w;
  if (base.size() < 2 || candidate.size() < 2) return w;
  w.valid = true;
  const double n1 = static_cast<double>(base.size()), n2 = static_cast<double>(candidate.size());
  const double v1 = variance_of(base) * (1 / n1 + unseen_variance);
  const double v2 = variance_of(candidate) * (1 / n2 + unseen_variance);
  w.difference = mean_of(candidate) - mean_of(base);
  w.standard_error = std::sqrt(v1 + v2);
  if (!(w.standard_error > 0)) {  // both sides constant
    w.df = n1 + n2 - 2;
    w.t = w.difference == 0 ? 0 : std::copysign(INFINITY, w.difference);
    w.p_value = w.difference == 0 ? 1 : 0;
    return w;
  }
  w.df = (v1 + v2) * (v1 + v2) / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1));
  w.t = w.difference / w.standard_error;
  w.p_value = std::min(1.0, 2 * (1 - student_t_cdf(std::abs(w.t), w.df)));
  return w;
}

HierarchicalComparison compare_hierarchical(const RepetitionTimes& base, const RepetitionTimes& candidate,
                                            double alpha) {
  HierarchicalComparison c;
  const bool by_process = base.size() >= 2 && candidate.size() >= 2;
  c.unit = by_process ? "process" : "repetition";
  const auto lb = unit_logs(base, by_process), ln = unit_logs(candidate, by_process);
  if (!base.empty() || !candidate.empty()) {
    size_t reps = 0;
    for (const auto* side : {&base, &candidate})
      for (const auto& process : *side) reps += process.size();
    c.repetitions_per_process = static_cast<double>(reps) / static_cast<double>(base.size() + candidate.size());
  }
  c.n_base = lb.size();
  c.n_new = ln.size();
  if (lb.empty() || ln.empty()) return c;
  c.base_seconds_per_sample = std::exp(mean_of(lb));
  c.new_seconds_per_sample = std::exp(mean_of(ln));
  c.ratio = c.low = c.high = c.new_seconds_per_sample / c.base_seconds_per_sample;
  const WelchTest w = welch_t_test(lb, ln, c.process_allowance() ? kProcessAllowance : 0.0);
  if (!w.valid) return c;
  c.p_value = w.p_value;
  c.df = w.df;
  const double pooled = ((c.n_base - 1) * variance_of(lb) + (c.n_new - 1) * variance_of(ln)) /
                        static_cast<double>(c.n_base + c.n_new - 2);
  c.log_sd = std::sqrt(pooled);
  if (w.standard_error > 0) {
    const double half = student_t_quantile(1 - alpha / 2, w.df) * w.standard_error;
    c.low = std::exp(w.difference - half);
    c.high = std::exp(w.difference + half);
  }
  c.has_interval = true;
  return c;
}

int64_t units_needed(double log_sd, double threshold, double alpha) {
  const double delta = std::log1p(threshold);
  if (!(delta > 0)) return 3;
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(0.8);
  const double n = 2 * z * z * log_sd * log_sd / (delta * delta);
  return std::max<int64_t>(3, static_cast<int64_t>(std::ceil(n)) + 1);
}

int64_t repetitions_needed(double log_sd, double threshold, double alpha) {
  const double delta = std::log1p(threshold);
  if (!(delta > 0)) return 0;
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(0.8);
  // 2·s²·(1/n + k)·z² ≤ δ²  ⇔  1/n ≤ δ²/(2·s²·z²) − k.
  const double room = delta * delta / (2 * z * z * log_sd * log_sd) - kProcessAllowance;
  if (!(room > 0)) return 0;
  return std::max<int64_t>(3, static_cast<int64_t>(std::ceil(1 / room)) + 1);
}

int64_t processes_needed(const HierarchicalComparison& c, double threshold, double alpha) {
  const double per_process = std::max(1.0, c.repetitions_per_process);
  return units_needed(c.log_sd * std::sqrt(kProcessAllowance + 1 / per_process), threshold, alpha);
}

}  // namespace tbd
