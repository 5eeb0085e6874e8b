// Data-parallel sharding of the real-data readers: rank r of W reads global
// batches r, r+W, ... of the one stream every rank orders identically, so the
// ranks' shards are disjoint and together are exactly the single-process stream.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <set>

#include "tbd/core/error.h"
#include "tbd/data/byte_text.h"
#include "tbd/data/criteo.h"
#include "tbd/data/movielens.h"
#include "tbd/data/translation_batches.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::TempDir;

TEST(DataShards, TranslationRanksTakeInterleavedBatchesOfOneOrder) {
  auto pairs = std::make_shared<SentencePairs>();
  for (int i = 0; i < 12; ++i) {  // sentence i holds the word 10+i, lengths 1..3
    pairs->source.push_back(std::vector<int32_t>(static_cast<size_t>(1 + i % 3), 10 + i));
    pairs->target.push_back(std::vector<int32_t>(static_cast<size_t>(1 + i % 3), 10 + i));
  }
  const SpecialIds ids{1, 2, 0, 0, false};
  const auto limit = LengthBatches::Limit::sentences;
  TranslationBatches single(pairs, ids, limit, 2, 7, 1);
  TranslationBatches rank0(pairs, ids, limit, 2, 7, 1, Shard{0, 2});
  TranslationBatches rank1(pairs, ids, limit, 2, 7, 2, Shard{1, 2});
  std::multiset<int64_t> epoch;  // 6 batches of 2 per epoch: 3 per rank
  for (int k = 0; k < 3; ++k) {
    const auto a = rank0.next(), b = rank1.next();
    EXPECT_TRUE(torch::equal(a.source, single.next().source)) << "rank 0, batch " << k;
    EXPECT_TRUE(torch::equal(b.source, single.next().source)) << "rank 1, batch " << k;
    for (const auto& t : {a.source, b.source})
      for (int64_t row = 0; row < t.size(0); ++row) epoch.insert(t[row][0].item<int64_t>());
  }
  std::multiset<int64_t> all;
  for (int i = 0; i < 12; ++i) all.insert(10 + i);
  EXPECT_EQ(epoch, all);  // each sentence exactly once across the two ranks
}

TEST(DataShards, MovieLensRanksTakeInterleavedBatches) {
  TempDir dir;
  {
    std::ofstream out(dir / "r.csv");
    for (int u = 0; u < 8; ++u)
      for (int i = 0; i < 2; ++i) out << u << "," << (u + i) << ",5,0\n";
  }
  auto ratings = std::make_shared<const MovieLensRatings>(dir / "r.csv");
  InteractionBatches single(ratings, 5, 4, 3, 1);
  InteractionBatches rank0(ratings, 5, 4, 3, 1, Shard{0, 2}), rank1(ratings, 5, 4, 3, 1, Shard{1, 2});
  for (int k = 0; k < 4; ++k) {
    for (auto* shard : {&rank0, &rank1}) {
      const auto expected = single.next(), got = shard->next();
      EXPECT_TRUE(torch::equal(got.users, expected.users)) << "batch " << k;
      EXPECT_TRUE(torch::equal(got.items, expected.items)) << "batch " << k;
    }
  }
}

TEST(DataShards, TokenWindowsRanksTakeInterleavedBatches) {
  TempDir dir;
  std::vector<uint8_t> bytes(500);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>('a' + i % 26);
  testing::write_bytes(dir / "text.txt", bytes);
  const auto text = std::make_shared<const ByteText>(dir / "text.txt", 256);
  TokenWindows single(text, 2, 16, 5, 1);
  TokenWindows rank0(text, 2, 16, 5, 1, Shard{0, 2}), rank1(text, 2, 16, 5, 1, Shard{1, 2});
  for (int k = 0; k < 3; ++k) {
    const auto a = rank0.next(), b = rank1.next();
    EXPECT_TRUE(torch::equal(a.inputs, single.next().inputs)) << "rank 0, batch " << k;
    EXPECT_TRUE(torch::equal(b.inputs, single.next().inputs)) << "rank 1, batch " << k;
    EXPECT_FALSE(torch::equal(a.inputs, b.inputs));
  }
}

TEST(DataShards, CriteoRanksTakeStridedRows) {
  TempDir dir;
  {
    std::ofstream out(dir / "t.tsv");
    for (int i = 0; i < 6; ++i) {  // row i: first integer feature i
      out << (i % 2);
      for (int f = 0; f < 13; ++f) out << "\t" << (f == 0 ? i : 1);
      for (int f = 0; f < 26; ++f) out << "\tabc";
      out << "\n" << (i == 2 ? "\n" : "");  // a blank line does not shift the stride
    }
  }
  const std::vector<int64_t> sizes(26, 100);
  const auto first_features = [&](Shard shard) {
    CriteoBatches batches(dir / "t.tsv", sizes, 3, shard);
    std::vector<int> rows;
    for (int k = 0; k < 2; ++k) {  // two batches of 3: a full pass and the start of the next
      const auto b = batches.next();
      for (int r = 0; r < 3; ++r)
        rows.push_back(static_cast<int>(std::lround(std::expm1(b.dense[r][0].item<float>()))));
    }
    return rows;
  };
  EXPECT_EQ(first_features(Shard{0, 2}), (std::vector<int>{0, 2, 4, 0, 2, 4}));
  EXPECT_EQ(first_features(Shard{1, 2}), (std::vector<int>{1, 3, 5, 1, 3, 5}));
  EXPECT_EQ(first_features(Shard{0, 1}), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(DataShards, CriteoFileWithFewerRowsThanRanksIsRefused) {
  TempDir dir;
  {
    std::ofstream out(dir / "t.tsv");
    out << "1";
    for (int f = 0; f < 13; ++f) out << "\t1";
    for (int f = 0; f < 26; ++f) out << "\tabc";
    out << "\n";
  }
  CriteoBatches batches(dir / "t.tsv", std::vector<int64_t>(26, 100), 1, Shard{1, 2});
  const std::string msg = testing::error_of<Error>([&] { batches.next(); });
  EXPECT_NE(msg.find("fewer processes"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tbd
