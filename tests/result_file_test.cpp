#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/output/result_file.h"
#include "tbd/output/summary.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ResultFile, WritesJsonAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir / "r.json";
  write_json_atomically(path, {{"schema", "tbd.result/1"}, {"x", 1}});
  EXPECT_EQ(nlohmann::json::parse(read(path))["x"], 1);
  write_json_atomically(path, {{"x", 2}});  // replaces
  EXPECT_EQ(nlohmann::json::parse(read(path))["x"], 2);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) (void)e, ++files;
  EXPECT_EQ(files, 1);
}

TEST(ResultFile, FailedWriteLeavesTheOldFileUntouched) {
  TempDir dir;
  const std::string path = dir / "r.json";
  write_json_atomically(path, {{"x", 1}});
  std::filesystem::create_directories(dir / "r.json.tmp." + std::to_string(getpid()));  // blocks the temp file
  EXPECT_THROW(write_json_atomically(path, {{"x", 2}}), Error);
  EXPECT_EQ(nlohmann::json::parse(read(path))["x"], 1);
}

TEST(ResultFile, OutputPathIsCheckedBeforeARun) {
  TempDir dir;
  EXPECT_NO_THROW(check_output_path(dir / "new.json"));
  EXPECT_NE(error_of<UsageError>([&] { check_output_path(dir / "missing/r.json"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { check_output_path(dir.path().string()); }).find("is a folder"),
            std::string::npos);
}

TEST(Summary, GroupsThousands) {
  EXPECT_EQ(with_thousands(25557032), "25,557,032");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace tbd
