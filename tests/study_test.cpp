// The study layer (src/tbd/study): the rules of tbd sweep, suite and scale
// without starting a run, and the pass-through `tbd run` options parsed
// with `tbd run`'s own declarations (cli/run_args.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <fstream>
#include <sstream>

#include "cli/run_args.h"
#include "tbd/core/error.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/study/comma_list.h"
#include "tbd/study/scale.h"
#include "tbd/study/suite.h"
#include "tbd/study/suite_presets.h"
#include "tbd/study/sweep.h"
#include "tbd/workloads/registry.h"
#include "test_util.h"

namespace tbd {
namespace {

using testing::error_of;

ChildOutcome exited(int code, const std::string& error = "") {
  ChildOutcome run;
  run.exit_code = code;
  run.error = error;
  run.seconds = 1.5;
  return run;
}

ChildOutcome signalled(int signal, bool oom_killed) {
  ChildOutcome run;
  run.signal = signal;
  run.exit_code = 128 + signal;
  run.oom_killed = oom_killed;
  run.error = "killed from outside";
  return run;
}

// The batch sizes a schedule hands out when every run has `status`.
std::vector<long long> run_all(BatchSchedule& schedule, const std::string& status = "ok") {
  std::vector<long long> sizes;
  while (const auto b = schedule.next()) {
    sizes.push_back(*b);
    if (!schedule.record(status, exited(0), false)) break;
  }
  return sizes;
}

SweepPlan automatic(long long start, long long max_batch) {
  SweepPlan plan;
  plan.start = start;
  plan.max_batch = max_batch;
  return plan;
}

SweepPlan list(std::vector<long long> sizes) {
  SweepPlan plan;
  plan.automatic = false;
  plan.sizes = std::move(sizes);
  return plan;
}

long long count(const std::vector<std::string>& tokens, const std::string& token) {
  return std::count(tokens.begin(), tokens.end(), token);
}

std::string value_of(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

// --- sweep: batch sizes and stop rules ------------------------------------

TEST(SweepBatchSizes, ReadsACommaSeparatedList) {
  EXPECT_EQ(parse_batch_sizes("1,2,4,8"), (std::vector<long long>{1, 2, 4, 8}));
  EXPECT_EQ(parse_batch_sizes("48"), (std::vector<long long>{48}));
}

TEST(SweepBatchSizes, RefusesWhatIsNotAPositiveWholeNumber) {
  for (const std::string bad : {"1,x", "0", "-2", "3.5", "2,,4", "4k"})
    EXPECT_THROW(parse_batch_sizes(bad), UsageError) << bad;
  EXPECT_NE(error_of<UsageError>([] { parse_batch_sizes("1,x"); }).find("got '1,x'"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { parse_batch_sizes(""); }).find("at least one"), std::string::npos);
}

TEST(SweepSchedule, AutoDoublesFromStartUntilMaxBatch) {
  BatchSchedule schedule(automatic(3, 20));
  EXPECT_EQ(run_all(schedule), (std::vector<long long>{3, 6, 12}));
  EXPECT_EQ(schedule.stopped_by(), "reached --max-batch 20");
  EXPECT_TRUE(schedule.skipped().empty());
}

TEST(SweepSchedule, AutoStopsAtTheFirstSizeOutOfMemory) {
  BatchSchedule schedule(automatic(2, 1024));
  EXPECT_EQ(schedule.next(), 2);
  EXPECT_TRUE(schedule.record("ok", exited(0), false));
  EXPECT_EQ(schedule.next(), 4);
  EXPECT_TRUE(schedule.record("failed", exited(1, "batch size 1 is too small"), false));  // a failure goes on
  EXPECT_EQ(schedule.next(), 8);
  EXPECT_FALSE(schedule.record("out_of_memory", exited(1, "out of memory"), false));
  EXPECT_EQ(schedule.next(), std::nullopt);
  EXPECT_EQ(schedule.stopped_by(), "out of memory at batch size 8");
  EXPECT_TRUE(schedule.skipped().empty());  // auto has no sizes left to skip
}

TEST(SweepSchedule, AListSkipsTheSizesAboveOneOutOfMemory) {
  BatchSchedule schedule(list({2, 8, 16, 32}));
  EXPECT_EQ(schedule.next(), 2);
  EXPECT_TRUE(schedule.record("ok", exited(0), false));
  EXPECT_EQ(schedule.next(), 8);
  EXPECT_FALSE(schedule.record("out_of_memory", exited(1), false));
  const auto skipped = schedule.skipped();
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0]["batch_size"], 16);
  EXPECT_EQ(skipped[1]["batch_size"], 32);
  for (const auto& p : skipped) EXPECT_EQ(p["status"], "skipped");
}

TEST(SweepSchedule, AListRunsEverySizeInItsOrder) {
  BatchSchedule schedule(list({8, 2, 4}));
  EXPECT_EQ(schedule.expected_points(), 3);
  EXPECT_EQ(run_all(schedule), (std::vector<long long>{8, 2, 4}));
  EXPECT_EQ(schedule.stopped_by(), "");
}

TEST(SweepSchedule, AnInterruptionEndsTheSweepWithItsReason) {
  BatchSchedule by_run(list({2, 4, 8}));
  by_run.next();
  EXPECT_FALSE(by_run.record("partial", exited(143, "interrupted by SIGTERM"), true));
  EXPECT_EQ(by_run.stopped_by(), "interrupted by SIGTERM");
  EXPECT_EQ(by_run.next(), std::nullopt);
  EXPECT_TRUE(by_run.skipped().empty());  // not run, but not known not to fit either

  BatchSchedule by_sweep(automatic(1, 64));  // the signal came between runs: the run itself completed
  by_sweep.next();
  EXPECT_FALSE(by_sweep.record("ok", exited(0), true));
  EXPECT_EQ(by_sweep.stopped_by(), "interrupted");
}

TEST(SweepSchedule, ChecksStartAndMaxBatch) {
  EXPECT_THROW({ BatchSchedule s(automatic(0, 8)); }, UsageError);
  EXPECT_THROW({ BatchSchedule s(automatic(16, 8)); }, UsageError);
  EXPECT_NO_THROW({ BatchSchedule s(automatic(8, 8)); });
}

TEST(SweepSchedule, DoublingNearTheLargestSizeEndsInsteadOfOverflowing) {
  BatchSchedule schedule(automatic(LLONG_MAX / 2 + 1, LLONG_MAX));
  EXPECT_EQ(run_all(schedule), (std::vector<long long>{LLONG_MAX / 2 + 1}));
  EXPECT_EQ(schedule.stopped_by(), "reached --max-batch " + std::to_string(LLONG_MAX));
}

TEST(SweepSchedule, AutoExpectsOnePointMoreAsItGoes) {
  BatchSchedule schedule(automatic(1, 64));
  EXPECT_EQ(schedule.expected_points(), 1);
  for (int n = 1; n <= 3; ++n) {
    schedule.next();
    EXPECT_EQ(schedule.expected_points(), n);
    schedule.record("ok", exited(0), false);
  }
}

// --- sweep: memory limit and the runs' options -------------------------------

TEST(SweepMemoryLimit, AGivenLimitWinsElseAutoOnACpuTakesThreeQuartersOfTheMachine) {
  const MemoryLimit given = sweep_memory_limit(true, 2048, true, 1 << 20);
  EXPECT_EQ(given.bytes, 2048);
  EXPECT_EQ(given.source, "--memory-limit");
  const MemoryLimit host = sweep_memory_limit(true, 0, true, 4000);
  EXPECT_EQ(host.bytes, 3000);
  EXPECT_EQ(host.source, "75% of this machine's memory");
  // A list, or a device with memory of its own, has no limit but the device's.
  EXPECT_EQ(sweep_memory_limit(false, 0, true, 4000).bytes, 0);
  EXPECT_EQ(sweep_memory_limit(true, 0, false, 4000).bytes, 0);
  EXPECT_EQ(sweep_memory_limit(true, 0, false, 4000).source, "");
}

TEST(SweepRunOptions, AddTheMemoryProbeOnlyWhereALimitNeedsItAndTheProbesLackIt) {
  PassedRunOptions passed;
  passed.tokens = {"--scale", "tiny", "--probes", "time,cpu", "--iters", "2"};
  passed.probes = {"time", "cpu"};
  const auto with_limit = sweep_run_options(passed, {1000, "--memory-limit"});
  EXPECT_EQ(count(with_limit, "--probes"), 1);
  EXPECT_EQ(value_of(with_limit, "--probes"), "time,cpu,memory");
  EXPECT_EQ(value_of(with_limit, "--iters"), "2");  // the rest is kept
  EXPECT_EQ(sweep_run_options(passed, {}), passed.tokens);

  passed.probes = {"time", "memory"};
  passed.tokens = {"--probes", "time,memory"};
  EXPECT_EQ(sweep_run_options(passed, {1000, "--memory-limit"}), passed.tokens);

  // No --probes typed, and the probes the runs would use lack memory: it is given.
  passed.tokens = {"--scale", "tiny"};
  passed.probes = {"time"};
  EXPECT_EQ(value_of(sweep_run_options(passed, {1000, "--memory-limit"}), "--probes"), "time,memory");
}

// --- sweep: points, the verdict and the table --------------------------------

nlohmann::json result_document(long long peak_bytes, double samples_per_s, bool partial = false) {
  return {{"throughput", {{"samples_per_s", samples_per_s}, {"unit", "images/s"}}},
          {"summary", {{"median_s", 0.0125}}},
          {"cpu", {{"utilisation", 0.42}}},
          {"memory", {{"peak_bytes", peak_bytes}}},
          {"partial", partial}};
}

TEST(SweepPoint, ARunThatFitsCarriesItsFiguresAndFile) {
  const auto p = sweep_point(8, exited(0), result_document(3 << 20, 123.5), {4 << 20, "--memory-limit"}, "d/bs-8.json",
                             "d/logs/bs-8.log");
  EXPECT_EQ(p["status"], "ok");
  EXPECT_EQ(p["batch_size"], 8);
  EXPECT_EQ(p["file"], "d/bs-8.json");
  EXPECT_EQ(p["log"], "d/logs/bs-8.log");
  EXPECT_EQ(p["peak_memory_bytes"], 3 << 20);
  EXPECT_DOUBLE_EQ(p["samples_per_s"].get<double>(), 123.5);
  EXPECT_EQ(p["unit"], "images/s");
  EXPECT_DOUBLE_EQ(p["median_iteration_s"].get<double>(), 0.0125);
  EXPECT_DOUBLE_EQ(p["cpu_utilisation"].get<double>(), 0.42);
  EXPECT_TRUE(p["flops_utilisation"].is_null());  // no flops probe in this result
  EXPECT_DOUBLE_EQ(p["seconds"].get<double>(), 1.5);
  EXPECT_FALSE(p.contains("error"));
}

TEST(SweepPoint, APeakAboveTheLimitIsOutOfMemoryWithoutAFile) {
  const auto p = sweep_point(16, exited(0), result_document(5000, 99), {4096, "75% of this machine's memory"},
                             "d/bs-16.json", "log");
  EXPECT_EQ(p["status"], "out_of_memory");
  EXPECT_FALSE(p.contains("file"));
  EXPECT_EQ(p["peak_memory_bytes"], 5000);  // measured, so kept
  const std::string error = p["error"];
  EXPECT_NE(error.find("5000 bytes exceeds the limit of 4096 bytes (75% of this machine's memory)"), std::string::npos)
      << error;
  // Without a limit the same run fits.
  EXPECT_EQ(sweep_point(16, exited(0), result_document(5000, 99), {}, "f", "log")["status"], "ok");
}

TEST(SweepPoint, AnInterruptedRunWithAResultIsPartial) {
  const auto by_signal =
      sweep_point(4, exited(130, "interrupted by SIGINT"), result_document(1, 1, true), {}, "f", "l");
  EXPECT_EQ(by_signal["status"], "partial");
  EXPECT_EQ(by_signal["error"], "interrupted by SIGINT");
  EXPECT_EQ(by_signal["file"], "f");
  EXPECT_EQ(sweep_point(4, exited(0), result_document(1, 1, true), {}, "f", "l")["status"], "partial");
}

TEST(SweepPoint, ARunWithoutAResultIsOutOfMemoryKilledOrFailed) {
  const nlohmann::json none;
  const auto oom = sweep_point(64, exited(1, "out of memory: tried to allocate 2 GiB"), none, {}, "f", "l");
  EXPECT_EQ(oom["status"], "out_of_memory");
  EXPECT_EQ(oom["error"], "out of memory: tried to allocate 2 GiB");
  EXPECT_EQ(sweep_point(64, signalled(SIGKILL, true), none, {}, "f", "l")["status"], "out_of_memory");
  EXPECT_EQ(sweep_point(64, signalled(SIGKILL, false), none, {}, "f", "l")["status"], "killed");
  const auto failed = sweep_point(64, exited(1, "bad.jpg: not a JPEG"), none, {}, "f", "l");
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_FALSE(failed.contains("file"));
  EXPECT_FALSE(failed.contains("samples_per_s"));
}

TEST(SweepVerdict, TheLargestFittingBatchIsTheLargestOk) {
  const nlohmann::json points = {{{"batch_size", 2}, {"status", "ok"}},
                                 {{"batch_size", 8}, {"status", "ok"}},
                                 {{"batch_size", 4}, {"status", "failed"}},
                                 {{"batch_size", 16}, {"status", "out_of_memory"}},
                                 {{"batch_size", 32}, {"status", "partial"}}};
  EXPECT_EQ(largest_fitting_batch(points), 8);
  EXPECT_EQ(largest_fitting_batch(nlohmann::json::array({{{"batch_size", 2}, {"status", "killed"}}})), 0);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SweepTable, ARowPerPointThenTheVerdictAndTheFolder) {
  const nlohmann::json sweep = {{"points",
                                 {sweep_point(2, exited(0), result_document(3 << 20, 1234.4), {}, "f", "l"),
                                  sweep_point(4, exited(1, "boom"), nlohmann::json(), {}, "f", "l")}},
                                {"largest_fitting_batch", 2},
                                {"stopped_by", "reached --max-batch 4"}};
  const auto lines = lines_of(sweep_table(sweep, "out/sw"));
  ASSERT_EQ(lines.size(), 5u);  // header, two points, verdict, folder
  EXPECT_NE(lines[0].find("peak memory"), std::string::npos);
  EXPECT_NE(lines[1].find("1234 images/s"), std::string::npos) << lines[1];  // 4 significant digits
  EXPECT_NE(lines[1].find("12.5 ms"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("42%"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("3.0 MiB"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("failed (boom)"), std::string::npos) << lines[2];
  EXPECT_EQ(lines[2].find("MiB"), std::string::npos) << lines[2];  // what was not measured shows as -
  EXPECT_EQ(lines[3], "largest batch size that fits: 2 (stopped: reached --max-batch 4)");
  EXPECT_EQ(lines[4], "results in out/sw (sweep.json; tbd report out/sw)");
  // The status column starts at the same place in every row.
  EXPECT_EQ(lines[1].find("ok"), lines[0].find("status"));
  EXPECT_EQ(lines[2].find("failed"), lines[0].find("status"));
}

TEST(SweepTable, SaysSoWhenNothingFitted) {
  const nlohmann::json sweep = {{"points", nlohmann::json::array()},
                                {"largest_fitting_batch", nullptr},
                                {"stopped_by", "out of memory at batch size 1"}};
  const auto lines = lines_of(sweep_table(sweep, "d"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "no batch size ran to completion (out of memory at batch size 1)");
}

// --- suite -----------------------------------------------------------------

TEST(SuitePlan, LaysTheRunOptionsAndEachWorkloadsOwnOverThePreset) {
  const auto plan =
      plan_suite("quick", "ncf,resnet50", {"--iters", "7", "--threads", "1"}, {"resnet50:--batch-size 16 --iters 9"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].workload, "ncf");
  EXPECT_EQ(plan[1].workload, "resnet50");
  EXPECT_EQ(value_of(plan[0].options, "--iters"), "7");
  EXPECT_EQ(value_of(plan[1].options, "--iters"), "9");
  EXPECT_EQ(count(plan[1].options, "--iters"), 1);
  EXPECT_EQ(value_of(plan[1].options, "--batch-size"), "16");
  EXPECT_EQ(value_of(plan[0].options, "--threads"), "1");
  EXPECT_EQ(value_of(plan[1].options, "--threads"), "1");
  // What the preset gives and nobody overrode stays.
  EXPECT_EQ(value_of(plan[0].options, "--repeat"), value_of(suite_preset_options("quick", "ncf"), "--repeat"));
}

TEST(SuitePlan, WithoutWorkloadsRunsEveryRegisteredOne) {
  const auto plan = plan_suite("paper", std::nullopt, {}, {});
  const auto names = workload_names();
  ASSERT_EQ(plan.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(plan[i].workload, names[i]);
}

TEST(SuitePlan, RefusesBadPresetsWorkloadsAndForSpecs) {
  EXPECT_NE(error_of<UsageError>([] { plan_suite("huge", "ncf", {}, {}); }).find("preset must be quick, paper or gpu"),
            std::string::npos);
  EXPECT_THROW(plan_suite("quick", "ncf,nosuch", {}, {}), UsageError);
  EXPECT_NE(error_of<UsageError>([] { plan_suite("quick", "ncf", {}, {"nocolon"}); }).find("WORKLOAD:OPTIONS"),
            std::string::npos);
  EXPECT_THROW(plan_suite("quick", "ncf", {}, {":--iters 2"}), UsageError);
  EXPECT_NE(error_of<UsageError>([] {
              plan_suite("quick", "ncf", {}, {"resnet50:--iters 2"});
            }).find("--for names resnet50, which this suite does not run"),
            std::string::npos);
}

TEST(SuitePlan, RefusesEmptyOrRepeatedWorkloads) {
  // --workloads '' used to run the default set, and ',' or 'ncf,,dlrm' dropped the empty items.
  for (const std::string bad : {"", ",", "ncf,,dlrm", "ncf,"})
    EXPECT_NE(error_of<UsageError>([&] { plan_suite("quick", bad, {}, {}); }).find("--workloads"), std::string::npos)
        << bad;
  EXPECT_NE(error_of<UsageError>([] { plan_suite("quick", "ncf,ncf", {}, {}); }).find("names ncf twice"),
            std::string::npos);
  EXPECT_EQ(plan_suite("quick", std::nullopt, {}, {}).size(), workload_names().size());
}

TEST(SuitePlan, SplitsForOptionsAsAShellWould) {
  const auto [w, words] = read_for_spec("ncf:--set 'a=b c'  --iters \"2\"");
  EXPECT_EQ(w, "ncf");
  EXPECT_EQ(words, (std::vector<std::string>{"--set", "a=b c", "--iters", "2"}));
  EXPECT_NE(error_of<UsageError>([] { read_for_spec("ncf:--set 'a=b"); }).find("--for ncf: the quote ' is not closed"),
            std::string::npos);
}

TEST(CommaList, RefusesEmptyListsEmptyItemsAndDuplicates) {
  EXPECT_EQ(list_items("a,b,c", "--x", "a,b"), (std::vector<std::string>{"a", "b", "c"}));
  for (const std::string bad : {"", ",", "a,,b", "a,", ",a"}) {
    const std::string message = error_of<UsageError>([&] { list_items(bad, "--x", "a,b"); });
    EXPECT_NE(message.find("--x"), std::string::npos) << bad;
    EXPECT_NE(message.find("e.g. --x a,b"), std::string::npos) << message;
  }
  EXPECT_NE(error_of<UsageError>([] { list_items("a,b,a", "--x", "a,b"); }).find("names a twice"), std::string::npos);
  EXPECT_THROW(parse_process_counts("2,1,2"), UsageError);
  EXPECT_THROW(parse_batch_sizes("4,4"), UsageError);
}

TEST(SuiteIndex, ReadsAnIndexAndRefusesWhatIsNotOne) {
  testing::TempDir dir;
  EXPECT_TRUE(read_suite_index(dir / "index.json").is_null());  // a new folder
  std::ofstream(dir / "broken.json") << "{\"schema\": ";
  EXPECT_NE(testing::error_of<Error>([&] { read_suite_index(dir / "broken.json"); }).find("not valid JSON"),
            std::string::npos);
  std::ofstream(dir / "other.json") << R"({"schema": "tbd.sweep/1", "runs": []})";
  EXPECT_NE(testing::error_of<Error>([&] { read_suite_index(dir / "other.json"); }).find("not a tbd.suite/1 index"),
            std::string::npos);
  std::ofstream(dir / "index.json") << R"({"schema": "tbd.suite/1", "runs": [{"workload": "ncf"}]})";
  EXPECT_EQ(read_suite_index(dir / "index.json")["runs"][0]["workload"], "ncf");
}

TEST(SuiteResume, KeepsOnlyACompletedRunOfTheSameOptionsWhoseResultIsThere) {
  const nlohmann::json entry = {{"workload", "ncf"}, {"options", {"--iters", "2"}}};
  nlohmann::json earlier = entry;
  earlier["status"] = "ok";
  EXPECT_TRUE(completed_earlier(earlier, entry, true));
  EXPECT_FALSE(completed_earlier(earlier, entry, false));  // its result file was removed
  nlohmann::json changed = entry;
  changed["options"] = {"--iters", "3"};
  EXPECT_FALSE(completed_earlier(earlier, changed, true));
  earlier["status"] = "failed";
  EXPECT_FALSE(completed_earlier(earlier, entry, true));
}

TEST(SuiteEntry, ARunsOutcomeMakesItsStatus) {
  const nlohmann::json entry = {{"workload", "ncf"}, {"file", "ncf.json"}, {"log", "logs/ncf.log"}};
  const auto ok = finish_suite_entry(entry, exited(0), nlohmann::json{{"partial", false}});
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["exit_status"], 0);
  EXPECT_DOUBLE_EQ(ok["seconds"].get<double>(), 1.5);
  EXPECT_EQ(ok["file"], "ncf.json");
  EXPECT_FALSE(ok.contains("error"));

  const auto partial = finish_suite_entry(entry, exited(143, "interrupted by SIGTERM"), {{"partial", true}});
  EXPECT_EQ(partial["status"], "partial");
  EXPECT_EQ(partial["error"], "interrupted by SIGTERM");
  EXPECT_TRUE(suite_stops_after(partial, exited(143, "interrupted by SIGTERM")));

  const auto killed = finish_suite_entry(entry, signalled(SIGKILL, false), nullptr);
  EXPECT_EQ(killed["status"], "killed");
  EXPECT_EQ(killed["exit_status"], 128 + SIGKILL);
  EXPECT_FALSE(killed.contains("file"));  // no result to point at

  const auto failed = finish_suite_entry(entry, exited(1, "bad.jpg: not a JPEG"), nullptr);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["error"], "bad.jpg: not a JPEG");
  EXPECT_FALSE(suite_stops_after(failed, exited(1)));
}

TEST(SuiteEntry, AnInterruptedRunThatCompletedItsResultStillStopsTheSuite) {
  const auto run = exited(130, "interrupted by SIGINT");
  const auto entry = finish_suite_entry({{"workload", "ncf"}}, run, {{"partial", false}});
  EXPECT_EQ(entry["status"], "ok");
  EXPECT_TRUE(suite_stops_after(entry, run));
  EXPECT_FALSE(suite_stops_after(entry, exited(0)));
}

TEST(SuiteIndex, KeepsTheRunsOfWorkloadsThisSuiteDoesNotRun) {
  const std::map<std::string, nlohmann::json> earlier = {{"gpt", {{"workload", "gpt"}, {"status", "ok"}}},
                                                         {"ncf", {{"workload", "ncf"}, {"status", "failed"}}}};
  const nlohmann::json runs = {{{"workload", "ncf"}, {"status", "ok"}}};
  const auto all = suite_index_runs(runs, earlier, {{"ncf", {}}});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["workload"], "ncf");
  EXPECT_EQ(all[0]["status"], "ok");  // this suite's run replaces the earlier one
  EXPECT_EQ(all[1]["workload"], "gpt");
}

TEST(SuiteSummary, CountsTheRunsAndNamesTheFailures) {
  const nlohmann::json runs = {{{"workload", "ncf"}, {"status", "ok"}},
                               {{"workload", "dlrm"}, {"status", "failed"}, {"error", "no data"}},
                               {{"workload", "gpt"}, {"status", "killed"}, {"error", "killed by signal 9"}},
                               {{"workload", "wgan"}, {"status", "skipped"}}};
  EXPECT_EQ(failed_runs(runs), 2);
  const auto lines = lines_of(suite_summary("quick", runs, "res"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "suite quick: 1 ok, 2 failed, 1 skipped of 4 runs; index res/index.json");
  EXPECT_EQ(lines[1], "  failed: dlrm: no data");
  EXPECT_EQ(lines[2], "report: tbd report res --format html --out res/report.html");
}

// --- scale -----------------------------------------------------------------

TEST(ScaleCounts, ReadsCountsAndRefusesTheRest) {
  EXPECT_EQ(parse_process_counts("1,2,4"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(parse_process_counts("1024"), (std::vector<int>{1024}));
  for (const std::string bad : {"1,x", "0", "1025", "", ",2", "1.5"})
    EXPECT_THROW(parse_process_counts(bad), UsageError) << bad;
}

TEST(ScaleFigures, SpeedUpAndEfficiencyAgainstTheFirstCount) {
  const auto two = scaling_figures(2, 180, 1, 100);
  EXPECT_DOUBLE_EQ(two.speedup, 1.8);
  EXPECT_DOUBLE_EQ(two.efficiency, 0.9);
  // Against a baseline of 2 processes: per-process throughput 90, 4 × 90 = 360 would be ideal.
  const auto four = scaling_figures(4, 300, 2, 180);
  EXPECT_DOUBLE_EQ(four.speedup, 300.0 / 180);
  EXPECT_DOUBLE_EQ(four.efficiency, 300.0 / 360);
  EXPECT_DOUBLE_EQ(scaling_figures(1, 100, 1, 100).efficiency, 1.0);
  const auto none = scaling_figures(2, 50, 1, 0);  // no baseline throughput: no figures
  EXPECT_EQ(none.speedup, 0);
  EXPECT_EQ(none.efficiency, 0);
}

TEST(ScaleTable, RowsLineUpUnderTheHeader) {
  const std::string header = scale_table_header();
  const std::string row = scale_table_row(2, 180, scaling_figures(2, 180, 1, 100));
  EXPECT_EQ(row.size(), header.size());
  EXPECT_NE(row.find("1.800"), std::string::npos) << row;
  EXPECT_NE(row.find("90.0%"), std::string::npos) << row;
  EXPECT_EQ(row.find("90.0%") + 5, header.find("efficiency") + 10);  // right-aligned under it
  EXPECT_NE(scale_table_footer("images/s", 2).find("throughput per process at 2"), std::string::npos);
}

// --- the pass-through `tbd run` options, parsed once -------------------------

const cli::PassThrough kSweep = {
    "tbd sweep", {"--out", "--json", "--batch-size", "--quiet", "--trace"}, " (give --out to sweep; --batch-sizes)"};

TEST(StudyRunOptions, AreReadTypedAndKeptAsTyped) {
  const std::vector<std::string> tokens = {"--device",     "cuda:1", "--probes", "time,flops",
                                           "--scale=tiny", "--set",  "depth=18"};
  const PassedRunOptions passed = cli::parse_run_options(tokens, "resnet50", kSweep);
  EXPECT_EQ(passed.tokens, tokens);
  EXPECT_EQ(passed.options.device, "cuda:1");
  EXPECT_EQ(passed.options.scale, Scale::tiny);
  EXPECT_EQ(passed.options.workload, "resnet50");
  EXPECT_EQ(passed.options.settings.at("depth"), "18");
  EXPECT_EQ(passed.probes, (std::vector<std::string>{"time", "flops"}));
}

TEST(StudyRunOptions, ProbesDefaultAndAllExpand) {
  EXPECT_EQ(cli::parse_run_options({}, "ncf", kSweep).probes, default_probes());
  EXPECT_EQ(cli::parse_run_options({"--probes", "all"}, "ncf", kSweep).probes, probe_names());
  EXPECT_EQ(cli::parse_run_options({}, "ncf", kSweep).options.device, "cpu");
}

TEST(StudyRunOptions, WhatTheStudySetsIsRefusedByName) {
  const std::vector<std::vector<std::string>> given = {
      {"--scale", "tiny", "--batch-size", "4"}, {"--batch-size=4"}, {"--batch-size", "x"}};  // x: refused by name first
  for (const auto& tokens : given)
    EXPECT_EQ(testing::error_of<UsageError>([&] { cli::parse_run_options(tokens, "ncf", kSweep); }),
              "tbd sweep sets --batch-size of its runs itself (give --out to sweep; --batch-sizes)")
        << tokens.back();
  EXPECT_NE(
      testing::error_of<UsageError>([] { cli::parse_run_options({"--quiet"}, "ncf", kSweep); }).find("sets --quiet"),
      std::string::npos);
  // The same option passes where the study does not set it (suite runs take a batch size).
  const cli::PassThrough suite = {"tbd suite", {"--out", "--json", "--quiet"}, "; give --out to suite instead"};
  EXPECT_EQ(cli::parse_run_options({"--batch-size", "4"}, "ncf", suite).options.batch_size, 4);
}

TEST(StudyRunOptions, WhatTbdRunRefusesIsRefusedBeforeAnyRun) {
  const auto refusal = [](std::vector<std::string> tokens) {
    return testing::error_of<UsageError>([&] { cli::parse_run_options(tokens, "ncf", kSweep); });
  };
  for (const auto& [tokens, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--bogus"}, "--bogus"},
           {{"stray"}, "stray"},
           {{"--iters", "many"}, "--iters"},
           {{"--precision", "fp16"}, "fp16 needs a CUDA device"},
           {{"--probes", "time,nope"}, "unknown probe 'nope'"},
           {{"--warmup", "soon"}, "--warmup must be a count or 'auto'"},
           {{"--trace-iters", "0"}, "--trace-iters must be at least 1"}}) {
    const std::string error = refusal(tokens);
    EXPECT_EQ(error.rfind("the runs of tbd sweep were refused: ", 0), 0u) << error;
    EXPECT_NE(error.find(says), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace tbd
