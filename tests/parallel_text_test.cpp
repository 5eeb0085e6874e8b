#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "tbd/core/error.h"
#include "tbd/data/length_batches.h"
#include "tbd/data/parallel_text.h"
#include "tbd/data/synthetic_text.h"
#include "tbd/data/text_lines.h"
#include "tbd/data/translation_batches.h"
#include "tbd/data/vocabulary.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

void write_text(const std::string& path, const std::string& text) {
  testing::write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Utf8, AcceptsValidAndFindsInvalidSequences) {
  EXPECT_EQ(find_invalid_utf8("plain ascii"), std::string::npos);
  EXPECT_EQ(find_invalid_utf8("Vi\xE1\xBB\x87t \xF0\x9F\x98\x80"), std::string::npos);  // ệ, 😀
  EXPECT_EQ(find_invalid_utf8("ab\xFF"), 2u);                                           // never valid
  EXPECT_EQ(find_invalid_utf8("a\xC3"), 1u);                                            // truncated
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);                                         // overlong '/'
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);                                    // surrogate
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);                                 // past U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\x80"), 0u);                                             // lone continuation
}

TEST(Vocabulary, BuiltFromTextByFrequencyWithSpecials) {
  const std::vector<std::string> lines = {"b a b", "c b a", "d"};
  const Vocabulary v = Vocabulary::from_text({&lines}, 6);  // 4 specials + 2 words
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v.token(v.unk()), "<unk>");
  EXPECT_EQ(v.token(v.pad()), "<pad>");
  EXPECT_EQ(v.id("b"), 4);  // most frequent first
  EXPECT_EQ(v.id("a"), 5);
  EXPECT_EQ(v.id("c"), v.unk());  // cut by the cap
  EXPECT_EQ(v.encode("b  zzz\ta"), (std::vector<int32_t>{4, static_cast<int32_t>(v.unk()), 5}));
}

TEST(Vocabulary, FileKeepsItsOrderAndAddsMissingSpecials) {
  TempDir dir;
  write_text(dir / "vocab.en", "<unk>\n<s>\n</s>\nhello\nworld\n");
  const Vocabulary v = Vocabulary::from_file(dir / "vocab.en");
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v.pad(), 0);  // the missing special goes in front
  EXPECT_EQ(v.unk(), 1);
  EXPECT_EQ(v.id("hello"), 4);
  EXPECT_EQ(v.id("world"), 5);
}

TEST(Vocabulary, RejectsMalformedFilesNamingFileAndLine) {
  TempDir dir;
  write_text(dir / "dup", "a\nb\na\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { Vocabulary::from_file(dir / "dup"); }),
                       "dup:3: duplicate token 'a' (first on line 1)"));
  write_text(dir / "space", "a\nb c\n");
  EXPECT_TRUE(
      contains(error_of<Error>([&] { Vocabulary::from_file(dir / "space"); }), "space:2: 'b c' is not one token"));
  write_text(dir / "blank", "a\n\nb\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { Vocabulary::from_file(dir / "blank"); }), "blank:2: empty line"));
  write_text(dir / "utf", "a\nb\xFE\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { Vocabulary::from_file(dir / "utf"); }), "utf:2: invalid UTF-8"));
  // An empty vocabulary file says so, not "expected one sentence per line".
  write_text(dir / "vocab.en", "");
  const std::string e = error_of<Error>([&] { Vocabulary::from_file(dir / "vocab.en"); });
  EXPECT_TRUE(contains(e, dir / "vocab.en" + ": the vocabulary file is empty; it must hold one token per line")) << e;
  EXPECT_FALSE(contains(e, "sentence")) << e;
}

TEST(ParallelText, EmptyVocabularyFileAndSymlinkLoopsNameThePath) {
  TempDir dir;
  const std::string d = dir.path().string();
  write_text(dir / "train.en", "a b\nc\n");
  write_text(dir / "train.vi", "x\ny\n");
  write_text(dir / "vocab.vi", "");
  std::string e = error_of<Error>([&] { read_parallel_text(d, {}); });
  EXPECT_TRUE(contains(e, d + "/vocab.vi: the vocabulary file is empty")) << e;
  std::filesystem::remove(dir / "vocab.vi");
  ASSERT_EQ(::symlink((dir / "vocab.vi").c_str(), (dir / "vocab.vi").c_str()), 0);
  e = error_of<Error>([&] { read_parallel_text(d, {}); });
  EXPECT_TRUE(contains(e, d + "/vocab.vi: a loop of symbolic links")) << e;
  std::filesystem::remove(dir / "vocab.vi");
  ASSERT_EQ(::symlink((dir / "train.de").c_str(), (dir / "train.de").c_str()), 0);
  e = error_of<Error>([&] { read_parallel_text(d, {}); });
  EXPECT_TRUE(contains(e, d + "/train.de: a loop of symbolic links")) << e;
  EXPECT_FALSE(contains(e, "filesystem error")) << e;
}

TEST(ParallelText, ReadsLineAlignedFilesWithVocabFiles) {
  TempDir dir;
  write_text(dir / "train.en", "hello world\r\nhello\n\nworld world world\n");  // CRLF, an empty line
  write_text(dir / "train.vi", "xin ch\xC3\xA0o\nch\xC3\xA0o\nmissing source\nth\xE1\xBA\xBF gi\xE1\xBB\x9Bi\n");
  write_text(dir / "vocab.en", "<unk>\n<s>\n</s>\n<pad>\nhello\nworld\n");
  ParallelTextOptions o;
  o.max_length = 2;
  const ParallelText t = read_parallel_text(dir.path().string(), o);
  EXPECT_TRUE(contains(t.source_file, "train.en"));
  EXPECT_TRUE(contains(t.target_file, "train.vi"));
  ASSERT_EQ(t.pairs.size(), 3);  // the pair with an empty source is dropped
  EXPECT_EQ(t.dropped, 1);
  EXPECT_EQ(t.truncated, 1);  // "world world world" cut to two tokens
  EXPECT_EQ(t.pairs.source[0], (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(t.pairs.source[2], (std::vector<int32_t>{5, 5}));
  // The target vocabulary is built from train.vi: "chào" is its most frequent word.
  EXPECT_EQ(t.target_vocabulary->id("ch\xC3\xA0o"), 4);
  EXPECT_EQ(t.pairs.target[1], (std::vector<int32_t>{4}));

  o.reverse = true;
  o.shared_vocabulary = true;
  const ParallelText r = read_parallel_text(dir.path().string(), o);
  EXPECT_TRUE(contains(r.source_file, "train.vi"));
  EXPECT_EQ(r.source_vocabulary.get(), r.target_vocabulary.get());
  EXPECT_NE(r.source_vocabulary->id("hello"), r.source_vocabulary->unk());
  EXPECT_NE(r.source_vocabulary->id("ch\xC3\xA0o"), r.source_vocabulary->unk());
}

TEST(ParallelText, SharedVocabularyFileServesBothSides) {
  TempDir dir;
  write_text(dir / "train.de", "hallo welt\n");
  write_text(dir / "train.en", "hello world\n");
  write_text(dir / "vocab.shared", "<pad>\n<unk>\n<s>\n</s>\nhello\nhallo\n");
  write_text(dir / "vocab.en", "unused\n");  // per-language files are ignored when shared
  ParallelTextOptions o;
  o.shared_vocabulary = true;
  const ParallelText t = read_parallel_text(dir.path().string(), o);
  EXPECT_EQ(t.source_vocabulary->size(), 6);
  EXPECT_EQ(t.source_vocabulary->pad(), 0);
  EXPECT_EQ(t.pairs.source[0], (std::vector<int32_t>{5, 1}));  // "welt" is unknown
  EXPECT_EQ(t.pairs.target[0], (std::vector<int32_t>{4, 1}));
}

TEST(ParallelText, RejectsMismatchedCorruptAndMissingFiles) {
  TempDir dir;
  const std::string d = dir.path().string();
  EXPECT_TRUE(contains(error_of<UsageError>([&] { read_parallel_text(d + "/nope", {}); }), "no such folder"));
  EXPECT_TRUE(contains(error_of<UsageError>([&] { read_parallel_text(d, {}); }), "found none"));

  write_text(dir / "train.en", "a b\nc\nd\n");
  write_text(dir / "train.vi", "x\ny\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { read_parallel_text(d, {}); }),
                       "train.en has 3 lines but " + d + "/train.vi has 2; " + d + "/train.en:3 has no translation"));

  write_text(dir / "train.vi", "x\ny\xC3(\nz\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { read_parallel_text(d, {}); }), "train.vi:2: invalid UTF-8 at byte 2"));

  write_text(dir / "train.vi", "");
  EXPECT_TRUE(contains(error_of<Error>([&] { read_parallel_text(d, {}); }), "train.vi: the file is empty"));

  write_text(dir / "train.vi", "x\ny\nz\n");
  write_text(dir / "vocab.vi", "x\nx\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { read_parallel_text(d, {}); }), "vocab.vi:2: duplicate token 'x'"));

  write_text(dir / "train.en", " \n\t\n\n");
  write_text(dir / "vocab.vi", "x\n");
  EXPECT_TRUE(contains(error_of<Error>([&] { read_parallel_text(d, {}); }), "no line pair has words on both sides"));

  write_text(dir / "train.de", "a\n");
  EXPECT_TRUE(contains(error_of<UsageError>([&] { read_parallel_text(d, {}); }),
                       "expected exactly two files train.SRC and train.TGT, found train.de train.en train.vi"));
}

TEST(LengthBatches, EveryExampleOncePerEpochInBatchesOfSimilarLength) {
  std::vector<int64_t> lengths;
  for (int i = 0; i < 100; ++i) lengths.push_back(1 + (i * 37) % 50);
  LengthBatches plan(lengths, LengthBatches::Limit::sentences, 8, 7);
  EXPECT_EQ(plan.batches_per_epoch(), 13);  // ⌈100 / 8⌉
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::multiset<int64_t> seen;
    for (int k = 0; k < 13; ++k) {
      const auto b = plan.batch(epoch * 13 + k);
      EXPECT_LE(b.size(), 8u);
      int64_t lo = 1000, hi = 0;
      for (int64_t i : b) lo = std::min(lo, lengths[i]), hi = std::max(hi, lengths[i]), seen.insert(i);
      EXPECT_LE(hi - lo, 5) << "a batch mixes lengths " << lo << " and " << hi;  // sorted: 100 over 50 lengths
    }
    EXPECT_EQ(seen.size(), 100u);
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 100u);
  }
  EXPECT_NE(plan.batch(0), plan.batch(13));  // epochs are shuffled differently
}

TEST(LengthBatches, TokenBudgetCountsPadding) {
  std::vector<int64_t> lengths = {3, 10, 4, 9, 30, 2, 5, 5};
  LengthBatches plan(lengths, LengthBatches::Limit::tokens, 20, 1);
  int64_t examples = 0;
  for (int64_t k = 0; k < plan.batches_per_epoch(); ++k) {
    const auto b = plan.batch(k);
    int64_t longest = 0;
    for (int64_t i : b) longest = std::max(longest, lengths[i]);
    if (b.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(b.size()) * longest, 20);
    } else {
      EXPECT_TRUE(longest <= 20 || lengths[b[0]] == 30);  // too long for the budget: alone
    }
    examples += static_cast<int64_t>(b.size());
  }
  EXPECT_EQ(examples, 8);
}

TEST(TranslationBatch, PadsAndShiftsForTeacherForcing) {
  SentencePairs pairs;
  pairs.source = {{10, 11, 12}, {13}};
  pairs.target = {{20}, {21, 22}};
  const SpecialIds ids{/*bos=*/1, /*eos=*/2, /*pad=*/3, /*source_pad=*/0, /*source_eos=*/true};
  const auto b = make_translation_batch(pairs, {0, 1}, ids);
  EXPECT_TRUE(torch::equal(b.source, torch::tensor({10, 11, 12, 2, 13, 2, 0, 0}, torch::kInt64).view({2, 4})));
  EXPECT_TRUE(torch::equal(b.source_lengths, torch::tensor({4, 2}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(b.target_input, torch::tensor({1, 20, 3, 1, 21, 22}, torch::kInt64).view({2, 3})));
  EXPECT_TRUE(torch::equal(b.target_output, torch::tensor({20, 2, 3, 21, 22, 2}, torch::kInt64).view({2, 3})));
  EXPECT_EQ(b.target_tokens, 5);
  EXPECT_EQ(padded_lengths(pairs, ids), (std::vector<int64_t>{4, 3}));
}

TEST(SyntheticText, LengthsAndWordsHaveTheRequestedShape) {
  const auto pairs = synthetic_sentence_pairs(2000, 1000, 800, 4, 17.0, 50, 3);
  ASSERT_EQ(pairs.size(), 2000);
  std::vector<size_t> lengths;
  int64_t target_words = 0, target_total = 0, top_word = 0;
  for (int64_t i = 0; i < pairs.size(); ++i) {
    lengths.push_back(pairs.source[i].size());
    EXPECT_GE(pairs.source[i].size(), 1u);
    EXPECT_LE(pairs.target[i].size(), 50u);
    for (int32_t w : pairs.source[i]) EXPECT_TRUE(w >= 4 && w < 1000);
    for (int32_t w : pairs.target[i]) {
      EXPECT_TRUE(w >= 4 && w < 800);
      top_word += w == 4;
    }
    target_words += static_cast<int64_t>(pairs.target[i].size());
    target_total += static_cast<int64_t>(pairs.source[i].size());
  }
  std::nth_element(lengths.begin(), lengths.begin() + 1000, lengths.end());
  EXPECT_NEAR(static_cast<double>(lengths[1000]), 17.0, 2.0);                                    // median
  EXPECT_NEAR(static_cast<double>(target_words) / static_cast<double>(target_total), 1.2, 0.1);  // vi/en ratio
  // Zipf over 796 words: the top word has probability 1/H(796) ≈ 0.14.
  EXPECT_NEAR(static_cast<double>(top_word) / static_cast<double>(target_words), 0.14, 0.02);
}

}  // namespace
}  // namespace tbd
