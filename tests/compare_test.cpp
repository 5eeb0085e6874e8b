// The statistics and decisions of `tbd compare`, the result-file reader
// behind compare and report, and the MLLOG and CSV writers.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "test_util.h"
#include "tbd/core/error.h"
#include "tbd/report/compare.h"
#include "tbd/report/compare_statistics.h"
#include "tbd/report/csv_log.h"
#include "tbd/report/mllog.h"
#include "tbd/report/result_set.h"

namespace tbd {
namespace {

// Expected numbers below come from a throwaway script, not from this code:
//   scipy.stats.mannwhitneyu(new, base, method="asymptotic", use_continuity=True)
// for the U tests, and for the ratio of medians Price and Bonett's formula
// written out in NumPy (c = round(n/2 − √n) ≥ 1, α* = 2·binom.cdf(c−1, n, ½),
// se(ln m) = (ln y(n−c+1) − ln y(c)) / (2·norm.ppf(1 − α*/2)),
// CI = ratio·exp(±norm.ppf(0.975)·√(se₁² + se₂²))), scipy 1.17.
const std::vector<double> kBase = {0.100, 0.102, 0.098, 0.101, 0.099, 0.103, 0.100, 0.097};
const std::vector<double> kSlower = {0.110, 0.108, 0.112, 0.100, 0.109, 0.111, 0.107, 0.113};

TEST(CompareStatistics, MannWhitneyMatchesScipy) {
  const MannWhitney r = mann_whitney_u(kBase, kSlower);
  EXPECT_DOUBLE_EQ(r.u_candidate, 60.0);  // scipy's statistic for (new, base)
  EXPECT_DOUBLE_EQ(r.u_base, 4.0);        // 8·8 − 60
  EXPECT_NEAR(r.p_value, 0.0037721875828710784, 1e-12);
  EXPECT_NEAR(r.probability_candidate_greater, 60.0 / 64, 1e-12);
  EXPECT_NEAR(r.rank_biserial, 2 * 60.0 / 64 - 1, 1e-12);
  // The test is symmetric: swapping the samples swaps the U's, keeps p.
  const MannWhitney s = mann_whitney_u(kSlower, kBase);
  EXPECT_DOUBLE_EQ(s.u_candidate, 4.0);
  EXPECT_NEAR(s.p_value, r.p_value, 1e-15);
}

TEST(CompareStatistics, MannWhitneyCorrectsForTies) {
  // Ties across and within the samples (three 3s, three 4s, two 5s ...).
  const MannWhitney r = mann_whitney_u({1, 2, 2, 3, 3, 3, 4}, {3, 4, 4, 5, 5, 6});
  EXPECT_DOUBLE_EQ(r.u_candidate, 38.5);
  EXPECT_NEAR(r.p_value, 0.012999854364387305, 1e-12);
}

TEST(CompareStatistics, IdenticalSamplesGiveNoEvidence) {
  const MannWhitney r = mann_whitney_u({1, 1, 1}, {1, 1, 1, 1});
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  EXPECT_DOUBLE_EQ(r.probability_candidate_greater, 0.5);
}

TEST(CompareStatistics, NormalQuantileInvertsTheCdf) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-10);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-10);
  EXPECT_NEAR(normal_cdf(normal_quantile(0.01)), 0.01, 1e-12);
}

TEST(CompareStatistics, RatioOfMediansMatchesPriceBonett) {
  const RatioOfMedians r = ratio_of_medians(kBase, kSlower);
  ASSERT_TRUE(r.has_interval);
  EXPECT_NEAR(r.ratio, 1.095, 1e-12);
  EXPECT_NEAR(r.low, 1.041427807983015, 1e-9);
  EXPECT_NEAR(r.high, 1.1513280045039427, 1e-9);
  // Three iterations per side (c = 1, α* = 0.25).
  const RatioOfMedians small = ratio_of_medians({1.0, 1.1, 1.2}, {2.0, 2.2, 2.1});
  EXPECT_NEAR(small.ratio, 1.909090909090909, 1e-12);
  EXPECT_NEAR(small.low, 1.6021799548206554, 1e-9);
  EXPECT_NEAR(small.high, 2.2747932204541437, 1e-9);
}

TEST(CompareStatistics, LogMedianStandardErrorUsesInnerOrderStatistics) {
  // n = 20: c = round(10 − 4.472) = 6, so y(6) = 0.55 and y(15) = 0.64.
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(0.50 + 0.01 * ((i * 7) % 20));
  EXPECT_NEAR(log_median_standard_error(v), 0.03715173658252696, 1e-9);
}

TEST(CompareStatistics, OneIterationHasNoInterval) {
  const RatioOfMedians r = ratio_of_medians({2.0}, {3.0, 3.1});
  EXPECT_FALSE(r.has_interval);
  EXPECT_DOUBLE_EQ(r.ratio, 3.05 / 2.0);
}

// A minimal tbd.result/1 document with the given iteration times.
nlohmann::json result_with(const std::vector<double>& times, const std::string& cpu = "Test CPU", int batch = 4) {
  return {{"schema", "tbd.result/1"},
          {"workload", {{"name", "resnet50"}, {"options", {{"scale", "tiny"}, {"batch_size", batch}, {"precision", "fp32"},
                                                           {"device", "cpu"}, {"threads", 2}, {"data", "synthetic"},
                                                           {"settings", nlohmann::json::object()}, {"seed", 42}}},
                        {"settings", {{"depth", "50"}}}}},
          {"environment", {{"cpu", {{"model", cpu}}}, {"libtorch", {{"version", "2.13.0"}}}, {"os", {{"hostname", "h"}}}}},
          {"iterations", times},
          {"summary", {{"median_s", times.empty() ? 0.0 : times[0]}}},
          {"throughput", {{"samples_per_s", 100.0}, {"unit", "images/s"}}},
          {"partial", false}};
}

ResultSet set_of(const nlohmann::json& r, const std::string& file = "r.json") {
  ResultSet s;
  s.runs.push_back({file, "", r});
  return s;
}

TEST(Compare, SlowerBeyondTheThresholdIsARegression) {
  const Comparison c = compare_results(set_of(result_with(kBase)), set_of(result_with(kSlower)), {}, "a", "b");
  ASSERT_EQ(c.runs.size(), 1u);
  EXPECT_EQ(c.runs[0].verdict, "slower");
  EXPECT_TRUE(c.regression());
  // Reversed, the same data is an improvement.
  const Comparison back = compare_results(set_of(result_with(kSlower)), set_of(result_with(kBase)), {}, "b", "a");
  EXPECT_EQ(back.runs[0].verdict, "faster");
  EXPECT_FALSE(back.regression());
}

TEST(Compare, SignificantButWithinTheThresholdIsNoChange) {
  // +9.5%, significant, but the threshold is 10%.
  const Comparison c = compare_results(set_of(result_with(kBase)), set_of(result_with(kSlower)), {0.10, 0.05}, "a", "b");
  EXPECT_EQ(c.runs[0].verdict, "no significant change");
  EXPECT_NE(c.runs[0].note.find("within"), std::string::npos);
  EXPECT_FALSE(c.regression());
}

TEST(Compare, TooFewIterationsCannotBeSignificant) {
  // Three distinct values a side, fully separated: p = 0.0809 at best (scipy agrees).
  const Comparison c = compare_results(set_of(result_with({1.0, 1.1, 1.2})), set_of(result_with({2.0, 2.1, 2.2})), {},
                                       "a", "b");
  EXPECT_EQ(c.runs[0].verdict, "no significant change");
  EXPECT_NE(c.runs[0].note.find("too few iterations"), std::string::npos);
}

TEST(Compare, DifferentMachinesAreWarnedAbout) {
  const Comparison c = compare_results(set_of(result_with(kBase, "CPU A")), set_of(result_with(kBase, "CPU B")), {},
                                       "a", "b");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("CPU differs"), std::string::npos);
  EXPECT_EQ(c.runs[0].verdict, "no significant change");
}

TEST(Compare, NothingComparableIsAnErrorNamingBothSides) {
  try {
    compare_results(set_of(result_with(kBase, "x", 4)), set_of(result_with(kBase, "x", 8)), {}, "old", "new");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nothing comparable"), std::string::npos) << what;
    EXPECT_NE(what.find("old"), std::string::npos);
    EXPECT_NE(what.find("b4"), std::string::npos);
    EXPECT_NE(what.find("b8"), std::string::npos);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ResultSet, BadFilesAreNamedInTheError) {
  testing::TempDir dir;
  std::ofstream(dir / "truncated.json") << R"({"schema": "tbd.result/1", "workload": )";
  EXPECT_NE(error_of([&] { load_results(dir / "truncated.json"); }).find("truncated.json: not valid JSON"),
            std::string::npos);
  std::ofstream(dir / "future.json") << R"({"schema": "tbd.result/2"})";
  EXPECT_NE(error_of([&] { load_results(dir / "future.json"); }).find("future.json: unknown schema 'tbd.result/2'"),
            std::string::npos);
  std::ofstream(dir / "other.json") << R"({"traceEvents": []})";
  EXPECT_NE(error_of([&] { load_results(dir / "other.json"); }).find("not a tbd file"), std::string::npos);
  nlohmann::json no_iterations = result_with(kBase);
  no_iterations.erase("iterations");
  std::ofstream(dir / "edited.json") << no_iterations.dump();
  EXPECT_NE(error_of([&] { load_results(dir / "edited.json"); }).find("edited.json: tbd.result/1 document lacks the 'iterations'"),
            std::string::npos);
  // In a folder, a malformed file still stops the reading (naming it).
  EXPECT_NE(error_of([&] { load_results(dir.path().string()); }).find(".json"), std::string::npos);
}

TEST(ResultSet, FoldersSkipJsonThatIsNotTbds) {
  testing::TempDir dir;
  std::ofstream(dir / "a.json") << result_with(kBase).dump();
  std::filesystem::create_directories(dir.path() / "sub");
  std::ofstream(dir / "sub/b.json") << result_with(kSlower, "Test CPU", 8).dump();
  std::ofstream(dir / "trace.json") << R"({"traceEvents": []})";
  std::ofstream(dir / "notes.txt") << "not json";
  const ResultSet s = load_results(dir.path().string());
  EXPECT_EQ(s.runs.size(), 2u);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].find("trace.json"), std::string::npos);
  EXPECT_NE(configuration_key(s.runs[0].result), configuration_key(s.runs[1].result));
  EXPECT_EQ(configuration_key_without_batch(s.runs[0].result), configuration_key_without_batch(s.runs[1].result));
}

TEST(Mllog, LinesHaveTheMlperfShape) {
  const std::string line = mllog_line(1700000000000, "POINT_IN_TIME", "global_batch_size", 32,
                                      {{"file", "x.cpp"}, {"lineno", 1}});
  EXPECT_EQ(line, R"(:::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME", )"
                  R"("key": "global_batch_size", "value": 32, "metadata": {"file": "x.cpp", "lineno": 1}})");
}

TEST(Mllog, ARunBecomesStartConfigurationAndStopEvents) {
  testing::TempDir dir;
  nlohmann::json r = result_with(kBase);
  r["workload"]["settings"]["lr"] = "0.1";
  append_mllog(dir / "log.txt", r, 1000, 2000);
  std::ifstream in(dir / "log.txt");
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(in, line);) {
    ASSERT_EQ(line.rfind(":::MLLOG ", 0), 0u) << line;
    events.push_back(nlohmann::json::parse(line.substr(9)));
  }
  ASSERT_GE(events.size(), 7u);
  EXPECT_EQ(events.front()["key"], "run_start");
  EXPECT_EQ(events.front()["event_type"], "INTERVAL_START");
  EXPECT_EQ(events.front()["time_ms"], 1000);
  EXPECT_EQ(events.back()["key"], "run_stop");
  EXPECT_EQ(events.back()["time_ms"], 2000);
  EXPECT_EQ(events.back()["metadata"]["status"], "success");
  bool batch = false, lr = false;
  for (const auto& e : events) {
    if (e["key"] == "global_batch_size") batch = e["value"] == 4;
    if (e["key"] == "opt_base_learning_rate") lr = e["value"] == 0.1;
  }
  EXPECT_TRUE(batch);
  EXPECT_TRUE(lr);
}

TEST(CsvLog, QuotesAndKeepsOneHeader) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  testing::TempDir dir;
  append_csv(dir / "runs.csv", result_with(kBase, "CPU, with a comma"));
  append_csv(dir / "runs.csv", result_with(kSlower));
  std::ifstream in(dir / "runs.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("created_utc,workload,scale,batch_size", 0), 0u);
  EXPECT_NE(lines[1].find("\"CPU, with a comma\""), std::string::npos);
  std::ofstream(dir / "other.csv") << "a,b,c\n1,2,3\n";
  EXPECT_NE(error_of([&] { append_csv(dir / "other.csv", result_with(kBase)); }).find("header"), std::string::npos);
}

}  // namespace
}  // namespace tbd
