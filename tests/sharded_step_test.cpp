// The sharded step's program (predict/sharded_step.h) and its replay: on a
// base small enough to replay by hand, ZeRO-3 awaits the first unit's
// gather in forward and the last unit's again when backward begins,
// prefetches the others behind computation, reduce-scatters each unit as
// its backward ends with two in flight, and gathers the root's buckets
// after the optimizer; ZeRO-2 and ZeRO-1 replace the units' gathers by
// nothing and the reduce-scatters by all-reduces.
#include <gtest/gtest.h>

#include "tbd/core/error.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/sharded_step.h"

namespace tbd {
namespace {

// Four 1 MB parameters: 0 an embedding (root) ready when backward ends, 1
// unit 0's ready at 90% of backward, 2 unit 1's at 50%, 3 a head (root) at
// 10%; forward 10 ms, backward 20 ms, optimizer 4 ms.
nlohmann::json base_result() {
  return {{"throughput", {{"samples_per_s", 1000.0}, {"unit", "samples/s"}}},
          {"summary", {{"mean_s", 0.034}}},
          {"iterations", {0.034, 0.034}},
          {"phases",
           {{"data_ms", 0.0},
            {"forward_ms", 10.0},
            {"backward_ms", 20.0},
            {"optimizer_ms", 4.0},
            {"other_ms", 0.0},
            {"iteration_ms", 34.0}}},
          {"model", {{"wrapping_units", {{"count", 2}, {"parameter_units", {-1, 0, 1, -1}}}}}},
          {"gradients",
           {{"elements", {250000, 250000, 250000, 250000}},
            {"element_size", {4, 4, 4, 4}},
            {"kind", {"Float@cpu", "Float@cpu", "Float@cpu", "Float@cpu"}},
            {"backward_passes", {{{"share_of_backward", 1.0}, {"ready_fraction", {1.0, 0.9, 0.5, 0.1}}}}}}},
          {"workload", {{"options", {{"batch_size", 8}}}}}};
}

ShardedStep step_for(Sharding s, bool overlap = true) {
  const auto base = base_result();
  return sharded_step(base, base["phases"], {.ranks = 2, .sharding = s, .bucket_mb = 1.0, .overlap = overlap});
}

int count(const ShardedStep& step, CollectiveKind kind) {
  int n = 0;
  for (const auto& c : step.collectives) n += c.kind == kind;
  return n;
}

const auto one_ms = [](const StepCollective&) { return 1e-3; };

TEST(ShardedStep, FullShardingGathersEachUnitTwiceAndHidesThePrefetchedOnes) {
  const ShardedStep step = step_for(Sharding::full);
  // Forward 10 ms + backward 20 ms + the optimizer's shard 4 / 2 ms.
  EXPECT_NEAR(step.compute_s, 0.032, 1e-12);
  // Each unit gathered before its forward and its backward; the root's two
  // buckets gathered after the step; every bucket reduce-scattered once.
  EXPECT_EQ(count(step, CollectiveKind::all_gather), 6);
  EXPECT_EQ(count(step, CollectiveKind::reduce_scatter), 4);
  EXPECT_EQ(count(step, CollectiveKind::all_reduce), 0);
  // 1 ms each, replayed by hand: forward waits for unit 0's gather (1 ms;
  // unit 1's is prefetched behind unit 0's 4 ms); backward waits for unit
  // 1's gather again (1 ms; unit 0's is prefetched) and for the last
  // reduce-scatter (1 ms); the two after-step gathers, one behind the
  // other, add 2 ms.
  const StepReplay replay = replay_step(step, one_ms);
  EXPECT_NEAR(replay.exposed_s, 0.005, 1e-12);
  EXPECT_NEAR(replay.busy_s, 0.010, 1e-12);
  // Free collectives expose nothing.
  EXPECT_NEAR(replay_step(step, [](const StepCollective&) { return 0.0; }).exposed_s, 0.0, 1e-15);
}

TEST(ShardedStep, GradientShardingReduceScattersDuringBackwardAndGathersAfterTheStep) {
  const ShardedStep step = step_for(Sharding::gradients);
  EXPECT_EQ(count(step, CollectiveKind::reduce_scatter), 4);
  EXPECT_EQ(count(step, CollectiveKind::all_gather), 4);
  // Reduce-scatters at 2, 10, 18 and 20 ms of backward: only the last one
  // outlasts it (1 ms); the four gathers after the step take 4 ms in a row.
  EXPECT_NEAR(replay_step(step, one_ms).exposed_s, 0.005, 1e-12);
  // Overlap off: all four after backward, one after another, the third and
  // fourth launched once the first two have ended: 4 ms, then the gathers.
  EXPECT_NEAR(replay_step(step_for(Sharding::gradients, /*overlap=*/false), one_ms).exposed_s, 0.008, 1e-12);
  // A workload that clips (its setting recorded as text) all-reduces the
  // norm of the shards before the optimizer: one more collective, awaited.
  auto clipping = base_result();
  clipping["workload"]["settings"] = {{"max_gradient_norm", "1.0"}};
  const ShardedStep clipped =
      sharded_step(clipping, clipping["phases"], {.sharding = Sharding::gradients, .bucket_mb = 1.0});
  EXPECT_EQ(count(clipped, CollectiveKind::all_reduce), 1);
  EXPECT_NEAR(replay_step(clipped, one_ms).exposed_s, 0.006, 1e-12);
}

TEST(ShardedStep, OptimizerShardingAllReducesAsReplicationDoes) {
  const ShardedStep step = step_for(Sharding::optimizer);
  EXPECT_EQ(count(step, CollectiveKind::all_reduce), 4);
  EXPECT_EQ(count(step, CollectiveKind::all_gather), 4);
  // The ring model's factors: 2(N−1)/N for an all-reduce, (N−1)/N for a gather.
  const StepCollective all_reduce{CollectiveKind::all_reduce, 1e6}, gather{CollectiveKind::all_gather, 1e6};
  EXPECT_NEAR(ring_collective_seconds(all_reduce, 4, 1e9, 0), 1.5e-3, 1e-15);
  EXPECT_NEAR(ring_collective_seconds(gather, 4, 1e9, 0), 0.75e-3, 1e-15);
  EXPECT_EQ(ring_collective_seconds(gather, 1, 1e9, 1e-5), 0.0);
}

TEST(ShardedStep, ThePredictionStepsAShardAndReplaysTheProgram) {
  DataParallelPlan plan;
  plan.bucket_mb = 1.0;
  plan.sharding = Sharding::full;
  plan.collective_seconds = one_ms;
  const auto p = predict_data_parallel(base_result(), plan);
  EXPECT_EQ(p["sharding"], "full");
  EXPECT_NEAR(p["iteration_ms"]["optimizer"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(p["iteration_ms"]["communication_exposed"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(p["iteration_ms"]["total"].get<double>(), 37.0, 1e-9);
  EXPECT_EQ(p["collectives"]["all-gather"]["per_iteration"], 6);
  EXPECT_NEAR(p["global_samples_per_s"].get<double>(), 2 * 1000.0 * 34 / 37, 1e-6);
}

TEST(ShardedStep, FullShardingNeedsEachParametersUnit) {
  auto base = base_result();
  base["model"].erase("wrapping_units");
  EXPECT_THROW(sharded_step(base, base["phases"], {.sharding = Sharding::full}), Error);
  base["model"]["wrapping_units"] = {{"count", 2}, {"parameter_units", {0, 1}}};  // two of four parameters
  EXPECT_THROW(sharded_step(base, base["phases"], {.sharding = Sharding::full}), Error);
  // A unit number outside -1 .. count − 1 (a damaged file) is refused, not
  // taken as the size of the unit table.
  for (const int bad : {2, 1000000000, -2}) {
    base["model"]["wrapping_units"] = {{"count", 2}, {"parameter_units", {-1, 0, bad, -1}}};
    EXPECT_THROW(sharded_step(base, base["phases"], {.sharding = Sharding::full}), Error) << bad;
  }
  // ZeRO-1 and ZeRO-2 do not need them.
  EXPECT_NO_THROW(sharded_step(base, base["phases"], {.sharding = Sharding::gradients}));
}

}  // namespace
}  // namespace tbd
