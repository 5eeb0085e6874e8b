// The comm probe's analysis of the reducer's events: busy time is the union
// of the buckets' in-flight intervals, hidden the part before backward ended.
#include <gtest/gtest.h>

#include "tbd/dist/gradient_reducer.h"
#include "tbd/measure/probes/comm_probe.h"

namespace tbd {
namespace {

BucketAllreduce bucket(int64_t bytes, double launched, double done) {
  return {.bytes = bytes, .launched_s = launched, .done_s = done, .device_seconds = std::nullopt};
}

TEST(CommAnalysis, OverlappingBucketsCountOnceAndSplitAtBackwardsEnd) {
  CommIteration it;
  it.buckets = {bucket(400, 10.0, 11.0), bucket(600, 10.5, 12.0)};
  it.backward_end_s = 11.5;
  it.wait_end_s = 12.25;
  const CommFigures f = analyse_synchronisation(it);
  EXPECT_EQ(f.buckets, 2);
  EXPECT_DOUBLE_EQ(f.bytes, 1000);
  EXPECT_DOUBLE_EQ(f.busy_s, 2.0);    // [10, 12], not 1 + 1.5
  EXPECT_DOUBLE_EQ(f.hidden_s, 1.5);  // [10, 11.5]
  EXPECT_DOUBLE_EQ(f.exposed_wait_s, 0.75);
  ASSERT_EQ(f.bucket_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(f.bucket_seconds[0], 1.0);
  EXPECT_DOUBLE_EQ(f.bucket_seconds[1], 1.5);
}

TEST(CommAnalysis, GapsBetweenBucketsAreNotBusyAndDeviceTimingWins) {
  CommIteration it;
  it.buckets = {bucket(8, 3.0, 4.0), bucket(8, 1.0, 2.0)};  // out of launch order
  it.buckets[1].device_seconds = 0.25;                      // NCCL's own timing
  it.backward_end_s = 0.5;                                  // both after backward: nothing hidden
  it.wait_end_s = 4.0;
  const CommFigures f = analyse_synchronisation(it);
  EXPECT_DOUBLE_EQ(f.busy_s, 2.0);
  EXPECT_DOUBLE_EQ(f.hidden_s, 0.0);
  EXPECT_DOUBLE_EQ(f.exposed_wait_s, 3.5);
  EXPECT_DOUBLE_EQ(f.bucket_seconds[0], 1.0);
  EXPECT_DOUBLE_EQ(f.bucket_seconds[1], 0.25);
}

// A sparse gradient's all-reduce (dlrm's tables) is busy, exposed time and
// bytes, but not a bucket: no all-reduce bus bandwidth for its allgathers.
TEST(CommAnalysis, SparseAllReducesAreBusyButNotBuckets) {
  CommIteration it;
  it.buckets = {bucket(1000, 1.0, 2.0), bucket(64, 3.0, 3.5)};
  it.buckets[1].sparse = true;
  it.backward_end_s = 3.0;
  it.wait_end_s = 3.5;
  const CommFigures f = analyse_synchronisation(it);
  EXPECT_EQ(f.buckets, 1);
  EXPECT_DOUBLE_EQ(f.bytes, 1064);
  EXPECT_DOUBLE_EQ(f.busy_s, 1.5);
  EXPECT_DOUBLE_EQ(f.hidden_s, 1.0);
  ASSERT_EQ(f.bucket_seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(f.bucket_seconds[0], 1.0);
}

// A sharded run's collectives: one busy union over every kind, bytes and
// counts per kind, algbw weighted by bytes over the timed ones only.
TEST(ShardedCommAnalysis, UnionOfEveryKindAndBytesWeightedBandwidth) {
  const std::vector<TimedCollective> collectives = {
      {.kind = "all-gather", .bytes = 100, .launched_s = 1.0, .done_s = 2.0, .seconds = 1.0},
      {.kind = "all-gather", .bytes = 300, .launched_s = 1.5, .done_s = 2.5, .seconds = 0.5},  // device-timed
      {.kind = "reduce-scatter", .bytes = 50, .launched_s = 4.0, .done_s = 4.5, .seconds = 0.5},
      {.kind = "reduce-scatter", .bytes = 70, .launched_s = 5.0, .done_s = -1, .seconds = -1},  // never seen done
  };
  const ShardedCommFigures f = analyse_sharded(collectives);
  EXPECT_EQ(f.collectives, 4);
  EXPECT_DOUBLE_EQ(f.bytes, 520);
  EXPECT_DOUBLE_EQ(f.busy_s, 2.0);  // [1, 2.5] and [4, 4.5]
  EXPECT_EQ(f.count_by_kind.at("all-gather"), 2);
  EXPECT_DOUBLE_EQ(f.bytes_by_kind.at("reduce-scatter"), 120);
  // all-gather: (100·100 + 300·600) / 400 = 475 bytes/s.
  EXPECT_DOUBLE_EQ(f.weighted_algbw_by_kind.at("all-gather") / f.timed_bytes_by_kind.at("all-gather"), 475);
  EXPECT_DOUBLE_EQ(f.timed_bytes_by_kind.at("reduce-scatter"), 50);
}

TEST(ShardedCommAnalysis, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor("all-reduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor("all-gather", 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor("reduce-scatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor("all-gather", 1), 0.0);
}

}  // namespace
}  // namespace tbd
