// The pure analysis of `tbd shapes`: which counts are timed, what is a
// cliff, which counts are performance-aware, the pruning choices and the
// Amdahl estimate, on made-up curves.
#include <gtest/gtest.h>

#include "tbd/core/error.h"
#include "tbd/study/channel_curve.h"

namespace tbd {
namespace {

using Counts = std::vector<int64_t>;

TEST(ChannelCounts, AutoIsTheMultiplesOfEightFromHalfAndTheCountsJustBelow) {
  EXPECT_EQ(channel_counts("auto", 64), (Counts{32, 40, 48, 56, 57, 58, 59, 60, 61, 62, 63, 64}));
  // 1000 (a classifier): from 504, the first multiple of 8 at or above 500.
  const Counts c = channel_counts("auto", 1000);
  EXPECT_EQ(c.front(), 504);
  EXPECT_EQ(c.back(), 1000);
  EXPECT_EQ(c.size(), (1000 - 504) / 8 + 1 + 7);  // 993..999 are not multiples of 8; 1000 is
  EXPECT_EQ(channel_counts("auto", 3), (Counts{1, 2, 3}));
}

TEST(ChannelCounts, RangesListsAndPercentagesAlwaysIncludeTheOriginal) {
  EXPECT_EQ(channel_counts("50%:100%:8", 64), (Counts{32, 40, 48, 56, 64}));
  EXPECT_EQ(channel_counts("30:40:4", 64), (Counts{30, 34, 38, 64}));
  EXPECT_EQ(channel_counts("60,56,64", 64), (Counts{56, 60, 64}));
  EXPECT_EQ(channel_counts("100%,200%", 48), (Counts{48, 96}));
}

TEST(ChannelCounts, BadSpecsAreUsageErrors) {
  for (const char* bad : {"", "abc", "0:64:8", "64:32:8", "8:64:0", "8:64:x", "1,,2", "-5", "99999", "50%:2000%:8",
                          "0%:50%:8", "8:64", "a:b:c", "1,2,", "60,56,60"})
    EXPECT_THROW(channel_counts(bad, 64), UsageError) << "'" << bad << "'";
}

CurvePoint p(int64_t c, double mean, double half_width) { return {c, mean, mean - half_width, mean + half_width}; }

TEST(Cliffs, ACountSlowerThanALargerOneBeyondBothIntervals) {
  // 56 takes twice 64's time with tight intervals: a cliff. 60 is slower by
  // its mean but its interval reaches 64's: not a cliff.
  const std::vector<CurvePoint> curve = {p(64, 1.0, 0.05), p(56, 2.0, 0.1), p(60, 1.2, 0.3), p(48, 0.8, 0.05)};
  const auto cliffs = find_cliffs(curve);
  ASSERT_EQ(cliffs.size(), 1u);
  EXPECT_EQ(cliffs[0].channels, 56);
  EXPECT_EQ(cliffs[0].faster_channels, 64);
  EXPECT_DOUBLE_EQ(cliffs[0].ratio, 2.0);
}

TEST(Cliffs, TheFastestLargerCountNamesTheCliff) {
  const auto cliffs = find_cliffs({p(32, 3.0, 0.1), p(40, 2.0, 0.1), p(48, 1.5, 0.1)});
  ASSERT_EQ(cliffs.size(), 2u);
  EXPECT_EQ(cliffs[0].channels, 32);
  EXPECT_EQ(cliffs[0].faster_channels, 48);
  EXPECT_DOUBLE_EQ(cliffs[0].ratio, 2.0);
  EXPECT_EQ(cliffs[1].channels, 40);
  EXPECT_TRUE(find_cliffs({p(8, 1.0, 0.5), p(16, 0.8, 0.5)}).empty());  // inside the intervals
}

TEST(Front, CountsNoLargerCountBeats) {
  const std::vector<CurvePoint> curve = {p(32, 0.5, 0), p(40, 0.7, 0), p(48, 0.6, 0), p(56, 2.0, 0), p(64, 1.0, 0)};
  EXPECT_EQ(performance_front(curve), (Counts{32, 48, 64}));
  EXPECT_EQ(largest_at_most(curve, 60)->channels, 56);  // naive: the cliff count
  EXPECT_EQ(best_at_most(curve, 60)->channels, 48);     // aware: the front count below it
  EXPECT_EQ(best_at_most(curve, 47)->channels, 32);
  EXPECT_FALSE(best_at_most(curve, 31).has_value());
  EXPECT_EQ(performance_front({p(8, 1.0, 0), p(16, 1.0, 0)}), (Counts{16}));  // a tie is no gain
}

TEST(Amdahl, OnlyTheLayersShareShrinks) {
  EXPECT_DOUBLE_EQ(amdahl_step(10.0, {{0.5, 0.5}, {0.2, 1.0}}), 7.5);
  EXPECT_DOUBLE_EQ(amdahl_step(10.0, {}), 10.0);
  EXPECT_DOUBLE_EQ(amdahl_step(10.0, {{0.1, 2.0}}), 11.0);  // a cliff makes the step slower
}

}  // namespace
}  // namespace tbd
