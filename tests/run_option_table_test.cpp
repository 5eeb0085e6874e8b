// The run options are declared once (core/run_option_table.h); these tests
// hold the four things made from the table to each other: the flags, the
// result's JSON, options read back from JSON, and the flags that make a
// result's configuration again.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "cli/run_args.h"
#include "tbd/core/error.h"
#include "tbd/core/run_option_table.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;

// A value other than the default for every option of the table. A new
// option without one here fails AllOptionsHaveASample: give it one.
const std::map<std::string, std::vector<std::string>>& samples() {
  static const std::map<std::string, std::vector<std::string>> s = {
      {"--device", {"cuda:1"}},
      {"--batch-size", {"12"}},
      {"--grad-accum", {"4"}},
      {"--precision", {"bf16"}},
      {"--optimizer-impl", {"loop"}},
      {"--memory-format", {"channels_last"}},
      {"--host-allocator", {"system"}},
      {"--cuda-graphs", {"auto"}},
      {"--activation-checkpointing", {"selective=3"}},
      {"--threads", {"3"}},
      {"--scale", {"tiny"}},
      {"--set", {"depth=101", "width=2"}},
      {"--data", {"/data/imagenet"}},
      {"--data-workers", {"5"}},
      {"--warmup", {"auto"}},
      {"--iters", {"7"}},
      {"--min-time", {"0.25"}},
      {"--repeat", {"3"}},
      {"--instrument-iters", {"2"}},
      {"--seed", {"18446744073709551615"}},
      {"--data-stream-rank", {"1"}},
      {"--nproc", {"2"}},
      {"--bucket-mb", {"12.5"}},
      {"--dist-overlap", {"off"}},
      {"--sharding", {"gradients"}},
      {"--embedding-sharding", {"row"}},
      {"--memory-limit", {"1.5G"}},
      {"--dist-timeout", {"30"}},
      {"--out", {"result.json"}},
      {"--json", {}},
      {"--quiet", {}},
  };
  return s;
}

// `tbd run W ARGS` parsed and resolved as the CLI does.
RunOptions parse_flags(std::vector<std::string> args) {
  CLI::App app{"test"};
  cli::RunArgs run;
  cli::declare_run_options(app, run);
  std::reverse(args.begin(), args.end());  // CLI11 takes them from the back
  app.parse(args);
  run.workload = "resnet50";
  return cli::resolve(run);
}

std::vector<std::string> every_option_given() {
  std::vector<std::string> args;
  for (const auto& spec : run_option_table()) {
    const auto& values = samples().at(spec.flag);
    if (spec.takes == RunOptionSpec::Takes::nothing) args.push_back(spec.flag);
    for (const auto& v : values) args.insert(args.end(), {spec.flag, v});
  }
  return args;
}

TEST(RunOptionTable, AllOptionsHaveASample) {
  for (const auto& spec : run_option_table())
    EXPECT_TRUE(samples().count(spec.flag)) << spec.flag << " has no sample value in this test";
}

TEST(RunOptionTable, EverySampleDiffersFromTheDefault) {
  // Otherwise the round trip below could not see an option dropped on the way.
  const RunOptions defaults;
  for (const auto& spec : run_option_table()) {
    RunOptions one = defaults;
    for (const auto& v : samples().at(spec.flag)) spec.parse(one, v);
    if (spec.takes == RunOptionSpec::Takes::nothing) spec.parse(one, "");
    one.world_size = 2;  // the distributed options are recorded only then
    RunOptions base = defaults;
    base.world_size = 2;
    if (!spec.json_key.empty()) EXPECT_NE(spec.record(one), spec.record(base)) << spec.flag;
  }
}

TEST(RunOptionTable, FlagsToJsonToFlagsRoundTrip) {
  RunOptions a = parse_flags(every_option_given());
  a.world_size = 2;  // as a rank of a distributed run records it
  const nlohmann::json recorded = to_json(a);
  for (const auto& spec : run_option_table())
    if (!spec.json_key.empty()) EXPECT_TRUE(recorded.contains(spec.json_key)) << spec.flag;

  RunOptions b = run_options_from_json(recorded);
  EXPECT_EQ(to_json(b), recorded);

  // The configuration rebuilt as flags gives the same configuration again.
  const RunOptions c = parse_flags(configuration_arguments(b));
  for (const auto& spec : run_option_table())
    if (spec.configuration) EXPECT_EQ(spec.record(c), spec.record(a)) << spec.flag;
  // ... and nothing beyond it: the distributed options and the data stream are the caller's.
  for (const auto& spec : run_option_table())
    if (!spec.configuration && !spec.json_key.empty())
      EXPECT_EQ(spec.record(c), spec.record(RunOptions{})) << spec.flag;
}

TEST(RunOptionTable, DefaultsRebuildNoFlags) {
  EXPECT_TRUE(configuration_arguments(RunOptions{}).empty());
  EXPECT_EQ(configuration_arguments(parse_flags({"--scale", "small", "--iters", "8"})),
            (std::vector<std::string>{"--scale", "small", "--iters", "8"}));
}

TEST(RunOptionTable, BadRecordedValuesNameTheKey) {
  nlohmann::json recorded = to_json(RunOptions{});
  recorded["iters"] = "many";
  EXPECT_NE(error_of<Error>([&] { run_options_from_json(recorded); }).find("workload.options.iters"),
            std::string::npos);
  recorded = to_json(RunOptions{});
  recorded["settings"] = 3;
  EXPECT_NE(error_of<Error>([&] { run_options_from_json(recorded); }).find("workload.options.settings"),
            std::string::npos);
  EXPECT_NE(error_of<Error>([&] { run_options_from_json(nlohmann::json::array()); }).find("workload.options"),
            std::string::npos);
}

TEST(RunOptionTable, WholeNumbersAreReadAsTyped) {
  EXPECT_NE(error_of<UsageError>([] {
              parse_flags({"--batch-size", "99999999999999999999"});
            }).find("--batch-size: must be at most 1073741824, got '99999999999999999999'"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              parse_flags({"--seed", "-1"});
            }).find("--seed: must be a whole number"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { parse_flags({"--threads", "2x"}); }).find("--threads"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { parse_flags({"--min-time", "soon"}); }).find("--min-time"), std::string::npos);
}

TEST(RunOptionTable, EmptyOutputNamesAndSharedOutputFilesAreRefused) {
  // `--out ''` used to mean "no result file" without a word.
  EXPECT_NE(error_of<UsageError>([] {
              parse_flags({"--out", ""});
            }).find("--out needs a file name"),
            std::string::npos);
  // Two outputs of one run naming one file: the result would overwrite the trace, or the CSV append to it.
  EXPECT_NE(error_of<UsageError>([] {
              parse_flags({"--out", "r.json", "--trace", "./r.json"});
            }).find("--out and --trace both name"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              parse_flags({"--csv", "log", "--mllog", "log"});
            }).find("both name log"),
            std::string::npos);
}

}  // namespace
}  // namespace tbd
