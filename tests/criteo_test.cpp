#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/data/criteo.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

std::string line_with(const std::string& label, const std::vector<std::string>& ints,
                      const std::vector<std::string>& ids) {
  std::string s = label;
  for (const auto& v : ints) s += "\t" + v;
  for (const auto& v : ids) s += "\t" + v;
  return s;
}

std::string good_line(int label = 1) {
  return line_with(std::to_string(label), std::vector<std::string>(13, "3"), std::vector<std::string>(26, "a9b0c1d2"));
}

CriteoBatch empty_batch(int64_t rows) {
  return {torch::zeros({rows, kCriteoDense}), torch::zeros({rows, kCriteoSparse}, torch::kInt64), torch::zeros({rows})};
}

TEST(Criteo, ParsesAsTheReferenceDoes) {
  std::vector<std::string> ints(13, "");
  ints[0] = "0";
  ints[1] = "-2";  // negative counts are clipped to 0
  ints[2] = "1";
  ints[3] = "1000";
  std::vector<std::string> ids(26, "");  // empty: id 0
  ids[0] = "68fd1e64";
  ids[1] = "FFFFFFFF";
  ids[2] = "10";
  const std::vector<int64_t> sizes(26, 1000);
  auto b = empty_batch(2);
  parse_criteo_line(line_with("1", ints, ids), "f:1", sizes, b, 1);
  EXPECT_EQ(b.labels[1].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(b.dense[1][0].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(b.dense[1][1].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(b.dense[1][2].item<float>(), std::log(2.0f));
  EXPECT_FLOAT_EQ(b.dense[1][3].item<float>(), std::log(1001.0f));
  EXPECT_FLOAT_EQ(b.dense[1][12].item<float>(), 0.0f);
  EXPECT_EQ(b.sparse[1][0].item<int64_t>(), 0x68fd1e64LL % 1000);
  EXPECT_EQ(b.sparse[1][1].item<int64_t>(), 0xFFFFFFFFLL % 1000);
  EXPECT_EQ(b.sparse[1][2].item<int64_t>(), 16);
  EXPECT_EQ(b.sparse[1][25].item<int64_t>(), 0);
  EXPECT_EQ(b.sparse[0][0].item<int64_t>(), 0);  // row 0 untouched
}

TEST(Criteo, MalformedLinesAreRejectedWithTheirPlace) {
  const std::vector<int64_t> sizes(26, 100);
  std::vector<std::string> ints(13, "1"), ids(26, "ab");
  auto bad_int = ints;
  bad_int[5] = "1.5";
  auto bad_id = ids;
  bad_id[3] = "xyz";
  auto negative_id = ids;
  negative_id[0] = "-1f";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1\t2\t3", "train.txt:7: expected 40 tab-separated fields"},
      {good_line() + "\textra", "expected 40 tab-separated fields (label, 13 integers, 26 hex ids), got 41"},
      {line_with("2", ints, ids), "train.txt:7: label must be 0 or 1, got '2'"},
      {line_with("", ints, ids), "label must be 0 or 1"},
      {line_with("0", bad_int, ids), "train.txt:7: integer feature 6 is '1.5'"},
      {line_with("0", ints, bad_id), "train.txt:7: categorical feature 4 is 'xyz', not a hex id"},
      {line_with("0", ints, negative_id), "categorical feature 1 is '-1f'"},
  };
  for (const auto& [line, message] : cases) {
    auto b = empty_batch(1);
    const std::string e = error_of<Error>([&] { parse_criteo_line(line, "train.txt:7", sizes, b, 0); });
    EXPECT_NE(e.find(message), std::string::npos) << e;
  }
}

TEST(Criteo, BatchesReadTheFileInOrderAndStartOver) {
  TempDir dir;
  {
    std::ofstream out(dir / "t.tsv");
    out << good_line(1) << "\n" << good_line(0) << "\n\n" << good_line(1) << "\n";  // a blank line is skipped
  }
  CriteoBatches batches(dir / "t.tsv", std::vector<int64_t>(26, 1000), 2);
  std::vector<float> labels;
  for (int i = 0; i < 3; ++i) {
    const auto b = batches.next();
    EXPECT_EQ(b.dense.sizes(), (std::vector<int64_t>{2, 13}));
    for (int r = 0; r < 2; ++r) labels.push_back(b.labels[r].item<float>());
  }
  EXPECT_EQ(labels, (std::vector<float>{1, 0, 1, 1, 0, 1}));
}

TEST(Criteo, AMalformedLineStopsThePipelineNamingIt) {
  TempDir dir;
  {
    std::ofstream out(dir / "t.tsv");
    out << good_line() << "\n" << good_line() << "\n" << good_line() << "\n1\tonly\n";
  }
  CriteoBatches batches(dir / "t.tsv", std::vector<int64_t>(26, 1000), 2);
  batches.next();
  const std::string e = error_of<Error>([&] { batches.next(); });
  EXPECT_NE(e.find(dir / "t.tsv" + ":4: expected 40 tab-separated fields"), std::string::npos) << e;
}

TEST(Criteo, MissingEmptyAndBlankFilesAreRefused) {
  TempDir dir;
  const std::vector<int64_t> sizes(26, 10);
  EXPECT_NE(error_of<UsageError>([&] { CriteoBatches b(dir / "none.tsv", sizes, 2); }).find("no such file"),
            std::string::npos);
  std::ofstream(dir / "empty.tsv").close();
  EXPECT_NE(error_of<UsageError>([&] { CriteoBatches b(dir / "empty.tsv", sizes, 2); }).find("empty"),
            std::string::npos);
  std::ofstream(dir / "blank.tsv") << "\n\n";
  CriteoBatches blank(dir / "blank.tsv", sizes, 2);
  EXPECT_NE(error_of<Error>([&] { blank.next(); }).find("no data lines"), std::string::npos);
}

TEST(Criteo, SymlinkLoopsAndFoldersAreNamedForWhatTheyAre) {
  TempDir dir;
  const std::vector<int64_t> sizes(26, 10);
  std::filesystem::create_symlink(dir / "b.tsv", dir / "a.tsv");
  std::filesystem::create_symlink(dir / "a.tsv", dir / "b.tsv");
  std::string e = error_of<Error>([&] { CriteoBatches b(dir / "a.tsv", sizes, 2); });
  EXPECT_NE(e.find(dir / "a.tsv" + ": a loop of symbolic links"), std::string::npos) << e;
  e = error_of<UsageError>([&] { CriteoBatches b(dir.path().string(), sizes, 2); });
  EXPECT_NE(e.find("is a folder without MLPerf DLRMv2's multi-hot days"), std::string::npos) << e;
  e = error_of<UsageError>([&] { CriteoBatches b("/dev/null", sizes, 2); });
  EXPECT_NE(e.find("/dev/null is a device, pipe or socket"), std::string::npos) << e;
}

}  // namespace
}  // namespace tbd
