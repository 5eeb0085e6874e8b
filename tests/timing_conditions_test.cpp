// What disturbs timing: the snapshots of /proc, the busy processes between
// them, and the warnings a result's figures give.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tbd/measure/machine/timing_conditions.h"
#include "test_util.h"

namespace tbd {
namespace {

ConditionSnapshot snapshot_at(double wall_s, std::map<int, std::pair<std::string, double>> processes) {
  ConditionSnapshot s;
  s.wall_s = wall_s;
  s.load1 = 0.5;
  s.processes = std::move(processes);
  return s;
}

TEST(TimingConditions, BusyProcessesAreThoseThatUsedTheCpuMeanwhile) {
  // Over 10 s: "hog" used 9.5 s of CPU, "idle" 0.1 s, "new" started and used 3 s.
  const auto start = snapshot_at(100, {{11, {"hog", 50.0}}, {12, {"idle", 7.0}}});
  const auto end = snapshot_at(110, {{11, {"hog", 59.5}}, {12, {"idle", 7.1}}, {13, {"new", 3.0}}});
  const auto j = timing_conditions(start, end);
  ASSERT_EQ(j["busy_processes"].size(), 2u);
  EXPECT_EQ(j["busy_processes"][0]["name"], "hog");
  EXPECT_NEAR(j["busy_processes"][0]["cpu_share"].get<double>(), 0.95, 1e-9);
  EXPECT_EQ(j["busy_processes"][1]["name"], "new");
  EXPECT_NEAR(j["window_s"].get<double>(), 10.0, 1e-12);
}

TEST(TimingConditions, ARealBusyProcessIsSeen) {
  // A spinning shell, orphaned (so it is not our child), killed by timeout.
  ASSERT_EQ(std::system("sh -c 'timeout 5 sh -c \"while :; do :; done\" >/dev/null 2>&1 &'"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = take_condition_snapshot();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto end = take_condition_snapshot();
  const auto j = timing_conditions(start, end);
  bool seen = false;
  for (const auto& p : j["busy_processes"]) seen |= p["name"] == "sh" && p["cpu_share"].get<double>() > 0.3;
  EXPECT_TRUE(seen) << j.dump();
  std::system("pkill -f 'while :; do :; done' >/dev/null 2>&1");
}

TEST(TimingConditions, StealAndLoadComeFromProc) {
  testing::TempDir proc;
  std::ofstream(proc / "loadavg") << "3.25 1.00 0.50 4/100 999\n";
  std::ofstream(proc / "stat") << "cpu  100 0 50 800 0 0 0 50 0 0\ncpu0 1 2 3\n";
  const auto start = take_condition_snapshot(proc.path().string(), 1);
  std::ofstream(proc / "stat") << "cpu  200 0 100 1600 0 0 0 100 0 0\n";
  const auto end = take_condition_snapshot(proc.path().string(), 1);
  ASSERT_TRUE(start.load1.has_value());
  EXPECT_DOUBLE_EQ(*start.load1, 3.25);
  const auto j = timing_conditions(start, end);
  EXPECT_NEAR(j["steal_share"].get<double>(), 50.0 / 1000.0, 1e-12);
}

nlohmann::json result_with_repetitions(const std::vector<double>& rates) {
  nlohmann::json reps = nlohmann::json::array();
  for (double r : rates) reps.push_back({{"samples_per_s", r}});
  return {{"throughput", {{"unit", "images/s"}, {"repetitions", reps}}},
          {"iterations", {0.1, 0.1, 0.1}},
          {"warmup", {{"iterations", 5}, {"ended_by", "count"}}},
          {"timing_conditions", timing_conditions(snapshot_at(0, {}), snapshot_at(1, {}))}};
}

TEST(NoiseWarnings, DispersionAcrossRepetitionsIsNamed) {
  // The example: repetitions at 11 and 806 images/s.
  const auto w = noise_warnings(result_with_repetitions({11, 806, 790}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("across 3 repetitions"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("11 to 806"), std::string::npos) << w[0];
  EXPECT_TRUE(noise_warnings(result_with_repetitions({800, 806, 790})).empty());
}

TEST(NoiseWarnings, TheCauseIsNamedWhenAProcessCompeted) {
  auto r = result_with_repetitions({400, 806, 790});
  r["timing_conditions"] =
      timing_conditions(snapshot_at(0, {{42, {"stress-ng", 0.0}}}), snapshot_at(10, {{42, {"stress-ng", 9.0}}}));
  const auto w = noise_warnings(r);
  ASSERT_FALSE(w.empty());
  EXPECT_NE(w[0].find("stress-ng (pid 42) 90% of a core"), std::string::npos) << w[0];
  // A loaded machine is said even when the figures look steady.
  auto steady = result_with_repetitions({800, 801, 799});
  steady["timing_conditions"] = r["timing_conditions"];
  const auto s = noise_warnings(steady);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].find("not quiet"), std::string::npos) << s[0];
}

TEST(NoiseWarnings, WarmupAtItsCapAndNoisyIterationsAreNamed) {
  auto r = result_with_repetitions({800, 801});
  r["warmup"] = {{"iterations", 50}, {"ended_by", "cap"}};
  r["iterations"] = {0.1, 0.2, 0.1, 0.3};
  r["iteration_samples"] = {4, 4, 4, 4};
  const auto w = noise_warnings(r);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("time per sample varied"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("cap of 50"), std::string::npos) << w[1];
  // Iterations of different batch sizes at the same time per sample are not noise.
  r["iterations"] = {0.1, 0.2, 0.1, 0.3};
  r["iteration_samples"] = {4, 8, 4, 12};
  r["warmup"]["ended_by"] = "settled";
  EXPECT_TRUE(noise_warnings(r).empty());
}

TEST(NoiseWarnings, IterationsOfVaryingShapesAreNotNoiseButRepetitionsStillAre) {
  auto r = result_with_repetitions({800, 801});
  r["iterations"] = {0.1, 0.2, 0.1, 0.3};  // long and short sentences
  r["iteration_samples"] = {4, 4, 4, 4};
  EXPECT_EQ(noise_warnings(r).size(), 1u);
  r["workload"]["variable_shapes"] = true;
  EXPECT_TRUE(noise_warnings(r).empty());
  r["throughput"]["repetitions"] = {{{"samples_per_s", 500.0}}, {{"samples_per_s", 800.0}}};
  const auto w = noise_warnings(r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("across 2 repetitions"), std::string::npos) << w[0];
}

TEST(NoiseWarnings, AShapeFirstMetInATimedWindowIsNamedWithItsCause) {
  auto r = result_with_repetitions({800, 801});
  r["batch_shapes"] = {{"declared", 8}, {"timed_iterations_first_seen", 2}};
  auto w = noise_warnings(r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("2 timed iteration(s) met a batch shape that warm-up had not run"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("declares 8 shapes"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("length_bucket"), std::string::npos) << w[0];
  r["batch_shapes"]["declared"] = nullptr;
  w = noise_warnings(r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("does not declare its shapes"), std::string::npos) << w[0];
  r["warmup"]["iterations"] = 0;  // --warmup 0 on one shape: the cold start was asked for
  EXPECT_TRUE(noise_warnings(r).empty());
  r["warmup"]["iterations"] = 5;
  r["batch_shapes"]["timed_iterations_first_seen"] = 0;
  EXPECT_TRUE(noise_warnings(r).empty());
}

}  // namespace
}  // namespace tbd
