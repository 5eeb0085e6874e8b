#include <gtest/gtest.h>

#include "test_util.h"
#include "tbd/core/error.h"
#include "tbd/measure/interrupt.h"
#include "tbd/measure/runner.h"

namespace tbd {
namespace {
using testing::error_of;

RunOptions tiny_run(int iters = 3, int warmup = 1) {
  RunOptions o;
  o.workload = "resnet50";
  o.scale = Scale::tiny;
  o.batch_size = 4;
  o.iters = iters;
  o.warmup = warmup;
  o.quiet = true;
  return o;
}

TEST(Runner, ResultHasTheSchemaKeysAndEveryIteration) {
  const RunOutcome out = run_benchmark(tiny_run(3, 1), {"data", "cpu"});
  const auto& r = out.result;
  EXPECT_EQ(r["schema"], "tbd.result/1");
  EXPECT_EQ(r["workload"]["name"], "resnet50");
  EXPECT_EQ(r["workload"]["options"]["batch_size"], 4);
  EXPECT_EQ(r["workload"]["options"]["scale"], "tiny");
  ASSERT_EQ(r["iterations"].size(), 3u);
  double total = 0;
  for (const auto& t : r["iterations"]) {
    EXPECT_GT(t.get<double>(), 0.0);
    total += t.get<double>();
  }
  // Throughput is samples over the measured time, not a per-iteration average.
  EXPECT_NEAR(r["throughput"]["samples_per_s"].get<double>(), 12.0 / total, 1e-9);
  EXPECT_EQ(r["throughput"]["unit"], "images/s");
  EXPECT_EQ(r["summary"]["n"], 3);
  EXPECT_FALSE(r["partial"].get<bool>());
  EXPECT_GT(r["model"]["parameters"].get<int64_t>(), 0);
  EXPECT_EQ(r["model"]["parameters"], r["model"]["trainable_parameters"]);
  EXPECT_TRUE(r.contains("environment"));
  EXPECT_TRUE(r["data"].contains("stall_share"));
  EXPECT_GT(r["cpu"]["user_s"].get<double>() + r["cpu"]["system_s"].get<double>(), 0.0);
  EXPECT_EQ(r["warmup"]["iterations"], 1);
}

TEST(Runner, RepetitionsAreKeptApart) {
  RunOptions o = tiny_run(2, 0);
  o.repeat = 3;
  const auto r = run_benchmark(o, {}).result;
  EXPECT_EQ(r["iterations"].size(), 6u);
  ASSERT_EQ(r["throughput"]["repetitions"].size(), 3u);
  for (const auto& rep : r["throughput"]["repetitions"]) EXPECT_EQ(rep["iterations"], 2);
}

TEST(Runner, MinTimeExtendsTheWindow) {
  RunOptions o = tiny_run(1, 0);
  o.min_time = 0.3;
  const auto r = run_benchmark(o, {}).result;
  EXPECT_GE(r["throughput"]["seconds"].get<double>(), 0.3);
  EXPECT_GT(r["iterations"].size(), 1u);
}

TEST(Runner, AutoWarmupRecordsWhyItEnded) {
  RunOptions o = tiny_run(2, 0);
  o.warmup_auto = true;
  const auto r = run_benchmark(o, {}).result;
  const std::string why = r["warmup"]["ended_by"];
  EXPECT_TRUE(why == "settled" || why == "cap") << why;
  EXPECT_GE(r["warmup"]["iterations"].get<int>(), why == "settled" ? 5 : 50);
}

TEST(Runner, InterruptGivesAPartialResult) {
  request_interrupt();
  const RunOutcome out = run_benchmark(tiny_run(5, 2), {});
  clear_interrupt();
  EXPECT_TRUE(out.partial);
  EXPECT_TRUE(out.result["partial"].get<bool>());
  EXPECT_EQ(out.result["iterations"].size(), 0u);
  EXPECT_TRUE(out.result["throughput"]["samples_per_s"].is_null());  // not a made-up zero
}

TEST(Runner, DivergingLossIsAnErrorNotAResult) {
  RunOptions o = tiny_run(20, 0);
  o.settings = {{"lr", "1e11"}};
  const std::string msg = error_of<Error>([&] { run_benchmark(o, {}); });
  EXPECT_NE(msg.find("diverged"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set lr"), std::string::npos) << msg;
}

TEST(Runner, BadRequestsAreUsageErrors) {
  RunOptions o = tiny_run();
  o.workload = "nosuch";
  EXPECT_THROW(run_benchmark(o, {}), UsageError);
  o = tiny_run();
  o.settings = {{"depth", "7"}};
  EXPECT_THROW(run_benchmark(o, {}), UsageError);
  o = tiny_run();
  o.device = "cuda";  // this build or machine has no CUDA device
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(run_benchmark(o, {}), UsageError);
  }
  EXPECT_THROW(run_benchmark(tiny_run(), {"nosuch-probe"}), UsageError);
}

TEST(Runner, HugeBatchIsAClearOutOfMemoryError) {
  // 2^40 images of 3x32x32 floats cannot be allocated anywhere.
  RunOptions o = tiny_run();
  o.batch_size = int64_t(1) << 40;
  const std::string msg = error_of<Error>([&] { run_benchmark(o, {}); });
  EXPECT_NE(msg.find("--batch-size"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tbd
