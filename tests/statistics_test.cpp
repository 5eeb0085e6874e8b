#include <gtest/gtest.h>

#include <cmath>

#include "tbd/core/statistics.h"

namespace tbd {
namespace {

// Hand-computed: {1,2,3,4,5}: mean 3, sample variance 2.5, sd 1.58114;
// p5 = 1 + 0.05·4 = 1.2; p95 = 4.8; CI half-width = 2.7764·1.58114/√5 = 1.96324.
TEST(Statistics, SummaryOfOneToFive) {
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_NEAR(s.stddev, 1.5811388, 1e-6);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_NEAR(s.p5, 1.2, 1e-12);
  EXPECT_NEAR(s.p95, 4.8, 1e-12);
  EXPECT_NEAR(s.ci95_low, 3.0 - 1.96324, 1e-4);
  EXPECT_NEAR(s.ci95_high, 3.0 + 1.96324, 1e-4);
  EXPECT_NEAR(s.cv, 1.5811388 / 3.0, 1e-6);
}

TEST(Statistics, PercentileInterpolatesBetweenRanks) {
  // {10, 20, 30, 40}: position q·3; q = 0.5 -> 25; q = 0.25 -> 17.5.
  EXPECT_DOUBLE_EQ(percentile({40, 10, 30, 20}, 0.5), 25.0);
  EXPECT_DOUBLE_EQ(percentile({40, 10, 30, 20}, 0.25), 17.5);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.95), 7.0);
  EXPECT_THROW(percentile({}, 0.5), std::invalid_argument);
}

TEST(Statistics, SingleValueHasNoInterval) {
  const Summary s = summarize({2.0});
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.ci95_low, 2.0);
  EXPECT_EQ(s.ci95_high, 2.0);
  EXPECT_EQ(summarize({}).n, 0);
}

TEST(Statistics, StudentQuantiles) {
  EXPECT_NEAR(student_t_975(1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_975(10), 2.2281, 1e-4);
  // Published values beyond the table: t(0.975; 40) = 2.0211, t(0.975; 120) = 1.9799.
  EXPECT_NEAR(student_t_975(40), 2.0211, 2e-4);
  EXPECT_NEAR(student_t_975(120), 1.9799, 2e-4);
  EXPECT_NEAR(student_t_975(100000), 1.95996, 1e-4);
}

TEST(Statistics, RatioOfTotalsWithConstantNumeratorMatchesTimeInterval) {
  // 32 samples per iteration: the rate is 32 / mean time, and its interval
  // follows from the delta method. Times {1, 2, 3}: R = 96/6 = 16.
  // residuals y - R·x = {16, -0, -16} -> Σ² = 512; var = 512 / (2·3·4) = 21.333;
  // half-width = 4.3027 · 4.6188 = 19.873.
  const RatioEstimate r = ratio_of_totals({32, 32, 32}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(r.value, 16.0);
  EXPECT_NEAR(r.ci95_high - r.value, 19.873, 1e-2);
  EXPECT_EQ(r.ci95_low, 0.0);  // 16 − 19.873 < 0: a rate is never negative
  // Steadier times: {1, 1.1, 0.9}: R = 32; residuals {0, -3.2, 3.2}: Σ² = 20.48;
  // var = 20.48 / (2·3·1) = 3.4133; half-width = 4.3027 · 1.8475 = 7.949.
  const RatioEstimate s = ratio_of_totals({32, 32, 32}, {1, 1.1, 0.9});
  EXPECT_NEAR(s.value, 32.0, 1e-12);
  EXPECT_NEAR(s.value - s.ci95_low, 7.949, 1e-2);
  EXPECT_NEAR(s.ci95_high - s.value, 7.949, 1e-2);
}

TEST(Statistics, RatioOfTotalsWeighsBySamples) {
  // Two iterations: 10 samples in 1 s and 30 samples in 1 s: 20 samples/s.
  EXPECT_DOUBLE_EQ(ratio_of_totals({10, 30}, {1, 1}).value, 20.0);
}

}  // namespace
}  // namespace tbd
