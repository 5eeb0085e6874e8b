// The options `tbd suite` presets give each workload.
#include <gtest/gtest.h>

#include <algorithm>

#include "tbd/core/error.h"
#include "tbd/study/suite_presets.h"
#include "tbd/workloads/registry.h"

namespace tbd {
namespace {

std::string value_of(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

TEST(SuitePresets, QuickTransformerBatchHoldsSentencesNotAHandfulOfTokens) {
  // transformer's --batch-size counts tokens: 16 tokens was not even one
  // sentence pair. The quick preset must give it several.
  const auto args = suite_preset_options("quick", "transformer");
  EXPECT_GE(std::stoll(value_of(args, "--batch-size")), 256);
}

TEST(SuitePresets, GpuLlamaIsTheSizeWhoseStatesFitOneGpu) {
  EXPECT_EQ(value_of(suite_preset_options("gpu", "llama"), "--set"), "size=1b");  // 8b's fp32 states: 128 GB
}

TEST(SuitePresets, EveryPresetRepeatsSoCompareHasUnits) {
  for (const auto& preset : suite_preset_names())
    for (const auto& entry : workload_registry()) {
      const auto args = suite_preset_options(preset, entry.name);
      EXPECT_GE(std::stoi(value_of(args, "--repeat")), 3) << preset << " " << entry.name;
    }
}

TEST(SuitePresets, OverridesReplaceThePresetsFlagsAndSetAccumulates) {
  const auto merged =
      merge_options({"--scale", "small", "--iters", "3", "--set", "a=1"}, {"--iters", "7", "--set", "b=2"});
  EXPECT_EQ(value_of(merged, "--iters"), "7");
  EXPECT_EQ(std::count(merged.begin(), merged.end(), "--iters"), 1);
  EXPECT_EQ(std::count(merged.begin(), merged.end(), "--set"), 2);
  EXPECT_THROW(suite_preset_options("fast", "resnet50"), UsageError);
}

}  // namespace
}  // namespace tbd
