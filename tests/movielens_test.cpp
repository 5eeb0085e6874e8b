#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <vector>

#include "tbd/core/error.h"
#include "tbd/data/movielens.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

std::string write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return dir / name;
}

TEST(MovieLens, ReadsRatingsAndDensifiesIds) {
  TempDir dir;
  const auto path = write_text(dir, "ratings.csv",
                               "userId,movieId,rating,timestamp\n"
                               "7,50,4.0,100\n"
                               "3,10,3.5,101\r\n"  // Windows line ends are fine
                               "7,10,1,102\n"
                               "\n"
                               "12,99,5.0,103\n");
  MovieLensRatings r(path);
  EXPECT_EQ(r.size(), 4);
  EXPECT_EQ(r.users(), 3);  // raw 3, 7, 12 -> 0, 1, 2
  EXPECT_EQ(r.items(), 3);  // raw 10, 50, 99 -> 0, 1, 2
  EXPECT_EQ(r.user(0), 1);
  EXPECT_EQ(r.item(0), 1);
  EXPECT_EQ(r.user(1), 0);
  EXPECT_EQ(r.item(3), 2);
  EXPECT_TRUE(r.rated(1, 0));
  EXPECT_TRUE(r.rated(1, 1));
  EXPECT_FALSE(r.rated(1, 2));
  EXPECT_FALSE(r.rated(0, 1));
}

TEST(MovieLens, HeaderIsOptional) {
  TempDir dir;
  MovieLensRatings r(write_text(dir, "r.csv", "1,2,3,4\n"));
  EXPECT_EQ(r.size(), 1);
}

TEST(MovieLens, MalformedLinesNameFileAndLine) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1,2,3,4\n1,2,3\n", ":2: expected 4 comma-separated fields"},
      {"1,2,3,4\n1,2,3,4,5\n", ":2: expected 4"},
      {"1,2,3,4\n1,2,3,4\nx1,2,3,4\n", ":3: bad user id 'x1'"},
      {"1,,3,4\n", ":1: bad item id ''"},
      {"1,2,good,4\n", ":1: bad rating 'good'"},
      {"1,2,nan,4\n", ":1: bad rating 'nan'"},  // parses as a double, but is no rating
      {"1,2,inf,4\n", ":1: bad rating 'inf'"},
      {"1,2,3,4\n1,2,3,\n", ":2: bad timestamp ''"},
      {"1,2,3,4\n-5,2,3,4\n", ":2: bad user id '-5'"},
      // strtoll stopped at the NUL, so this line read as 1,2,3,4.
      {std::string("1,2,3,4\n1\0junk,2,3,4\n", 21), ":2: a NUL byte at column 2"},
      {std::string("1,2,3,4\n1,2,3,4\0\n", 17), ":2: a NUL byte at column 8"},
  };
  for (const auto& [text, message] : cases) {
    const auto path = write_text(dir, "bad.csv", text);
    const std::string e = error_of<Error>([&] { MovieLensRatings r(path); });
    EXPECT_NE(e.find(path + message), std::string::npos) << e;
  }
}

TEST(MovieLens, HeaderMustBeMovieLensColumnsInOrder) {
  TempDir dir;
  // Letter case and spaces aside, the header is MovieLens's.
  EXPECT_EQ(MovieLensRatings(write_text(dir, "ok.csv", "UserID, MovieID ,Rating,Timestamp\n1,2,3,4\n")).size(), 1);
  for (const std::string& header :
       std::vector<std::string>{"movieId,userId,rating,timestamp", "userId,movieId,timestamp,rating",
                                "user,item,rating,timestamp", "userId,movieId,rating", "a,b,c,d,e"}) {
    const auto path = write_text(dir, "swapped.csv", header + "\n50,7,4.0,100\n");
    const std::string e = error_of<Error>([&] { MovieLensRatings r(path); });
    EXPECT_NE(e.find(path + ":1: header '" + header +
                     "' is not the MovieLens ratings header "
                     "userId,movieId,rating,timestamp"),
              std::string::npos)
        << e;
  }
}

TEST(MovieLens, FolderOrDeviceIsNamedForWhatItIs) {
  TempDir dir;
  std::string e = error_of<UsageError>([&] { MovieLensRatings r(dir.path().string()); });
  EXPECT_NE(e.find("--data " + dir.path().string() + " is a folder; ncf reads one MovieLens ratings file"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("no ratings"), std::string::npos) << e;
  write_text(dir, "ratings.csv", "1,2,3,4\n");
  e = error_of<UsageError>([&] { MovieLensRatings r(dir.path().string()); });
  EXPECT_NE(e.find("give --data " + dir / "ratings.csv"), std::string::npos) << e;
  e = error_of<UsageError>([&] { MovieLensRatings r("/dev/null"); });
  EXPECT_NE(e.find("--data /dev/null: not a regular file"), std::string::npos) << e;
}

TEST(MovieLens, EmptyOrMissingFilesAreRefused) {
  TempDir dir;
  EXPECT_NE(error_of<Error>([&] {
              MovieLensRatings r(write_text(dir, "e.csv", "userId,movieId,rating,timestamp\n"));
            }).find("no ratings"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { MovieLensRatings r(dir / "missing.csv"); }).find("no such file"),
            std::string::npos);
}

TEST(MovieLens, BatchesPairEachPositiveWithUnratedNegatives) {
  TempDir dir;
  std::string text;
  for (int u = 0; u < 10; ++u)
    for (int i = 0; i < 3; ++i) text += std::to_string(u) + "," + std::to_string(u + i) + ",5,0\n";
  auto ratings = std::make_shared<const MovieLensRatings>(write_text(dir, "r.csv", text));
  InteractionBatches batches(ratings, 15, 4, 1, 2);
  for (int b = 0; b < 4; ++b) {  // 60 samples: 12 positives, into the second epoch
    const auto batch = batches.next();
    for (int64_t i = 0; i < 15; ++i) {
      const int64_t user = batch.users[i].item<int64_t>(), item = batch.items[i].item<int64_t>();
      const bool positive = batch.labels[i].item<float>() == 1.0f;
      EXPECT_EQ(positive, i % 5 == 0);
      EXPECT_EQ(ratings->rated(user, item), positive) << "user " << user << " item " << item;
      if (i % 5 != 0) {
        EXPECT_EQ(user, batch.users[i - i % 5].item<int64_t>());  // the positive's user
      }
    }
  }
}

}  // namespace
}  // namespace tbd
