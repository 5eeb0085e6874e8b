// The token-file readers: llm.c shards (version 1 uint16, version 7 uint32)
// and nanoGPT's headerless uint16 .bin, memory-mapped; the windows cut from
// them and their targets; sharding by rank; and every kind of bad file
// refused with an error naming the file and the byte offset.
#include <gtest/gtest.h>

#include <set>

#include "tbd/core/error.h"
#include "tbd/data/token_file_windows.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;
using testing::write_bytes;

void put_le(std::vector<uint8_t>& out, uint64_t v, int width) {
  for (int b = 0; b < width; ++b) out.push_back(static_cast<uint8_t>(v >> (8 * b)));
}

// An llm.c shard as llm.c's dev/data scripts write it: 256 int32 of header
// (magic, version, token count, zeros), then the tokens.
std::vector<uint8_t> llmc_bytes(int32_t magic, int32_t version, int64_t count, const std::vector<int64_t>& ids,
                                int width) {
  std::vector<uint8_t> b;
  put_le(b, static_cast<uint32_t>(magic), 4);
  put_le(b, static_cast<uint32_t>(version), 4);
  put_le(b, static_cast<uint32_t>(count), 4);
  b.resize(1024, 0);
  for (int64_t id : ids) put_le(b, static_cast<uint64_t>(id), width);
  return b;
}

void write_gpt2_shard(const std::string& path, const std::vector<int64_t>& ids) {
  write_bytes(path, llmc_bytes(kLlmcGpt2Magic, 1, static_cast<int64_t>(ids.size()), ids, 2));
}

void write_nanogpt(const std::string& path, const std::vector<int64_t>& ids) {
  std::vector<uint8_t> b;
  for (int64_t id : ids) put_le(b, static_cast<uint64_t>(id), 2);
  write_bytes(path, b);
}

std::vector<int64_t> iota_ids(int64_t n, int64_t from = 0) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = from + i;
  return ids;
}

std::vector<int64_t> all_tokens(const TokenFile& f) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < f.tokens(); ++i) ids.push_back(f.token(i));
  return ids;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TokenFile, ReadsAVersion1ShardOfUint16Tokens) {
  TempDir dir;
  const std::vector<int64_t> ids = {50256, 15496, 11, 995, 0, 65535};  // <|endoftext|>Hello, world ...
  write_gpt2_shard(dir / "g_train_000000.bin", ids);
  const TokenFile f(dir / "g_train_000000.bin", false);
  EXPECT_EQ(f.format(), TokenFormat::llmc_uint16);
  EXPECT_EQ(f.width(), 2);
  EXPECT_EQ(all_tokens(f), ids);
  EXPECT_EQ(f.byte_offset(3), 1024 + 6);
}

TEST(TokenFile, ReadsAVersion7ShardOfUint32Tokens) {
  TempDir dir;
  const std::vector<int64_t> ids = {128000, 9906, 11, 1917, 128001, 65536, 0};  // ids beyond uint16 too
  write_bytes(dir / "llama.bin", llmc_bytes(kLlmcLlama3Magic, 7, 7, ids, 4));
  const TokenFile f(dir / "llama.bin", false);
  EXPECT_EQ(f.format(), TokenFormat::llmc_uint32);
  EXPECT_EQ(f.width(), 4);
  EXPECT_EQ(all_tokens(f), ids);
  // The magic decides, whatever the name.
  write_bytes(dir / "llama.tokens", llmc_bytes(kLlmcLlama3Magic, 7, 7, ids, 4));
  EXPECT_TRUE(is_token_file(dir / "llama.tokens"));
  EXPECT_EQ(all_tokens(TokenFile(dir / "llama.tokens", false)), ids);
}

TEST(TokenFile, ReadsANanoGptBinOfRawUint16) {
  TempDir dir;
  const std::vector<int64_t> ids = {5962, 22307, 25, 198, 50256, 0, 1};
  write_nanogpt(dir / "train.bin", ids);
  const TokenFile f(dir / "train.bin", false);
  EXPECT_EQ(f.format(), TokenFormat::nanogpt_uint16);
  EXPECT_EQ(f.tokens(), 7);
  EXPECT_EQ(all_tokens(f), ids);
  EXPECT_EQ(f.byte_offset(3), 6);
}

TEST(TokenFile, TellsTokenDataFromText) {
  TempDir dir;
  write_nanogpt(dir / "nano/train.bin", {1, 2, 3});
  write_bytes(dir / "text/a.txt", {'h', 'i', '\n'});
  write_bytes(dir / "book.txt", {'h', 'i', '\n'});
  EXPECT_TRUE(is_token_data(dir / "nano"));
  EXPECT_TRUE(is_token_data(dir / "nano/train.bin"));
  EXPECT_FALSE(is_token_data(dir / "text"));
  EXPECT_FALSE(is_token_data(dir / "book.txt"));
  EXPECT_FALSE(is_token_data(dir / "missing"));  // the text reader says what is missing
}

TEST(TokenStream, AFolderIsItsTrainFilesInNameOrder) {
  TempDir dir;
  write_gpt2_shard(dir / "fw/fw_train_000002.bin", iota_ids(3, 200));
  write_gpt2_shard(dir / "fw/fw_val_000000.bin", iota_ids(5, 900));
  write_gpt2_shard(dir / "fw/fw_train_000001.bin", iota_ids(4, 100));
  write_bytes(dir / "fw/.hidden.bin", {1, 2});
  write_bytes(dir / "fw/README", {'x'});
  const auto files = token_files(dir / "fw");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], dir / "fw/fw_train_000001.bin");
  EXPECT_EQ(files[1], dir / "fw/fw_train_000002.bin");
  const TokenStream stream(files, 50257);
  EXPECT_EQ(stream.size(), 7);
  std::vector<int64_t> got(5);
  stream.read(2, 5, got.data());  // across the boundary between the two files
  EXPECT_EQ(got, (std::vector<int64_t>{102, 103, 200, 201, 202}));
  EXPECT_EQ(stream.description(), "llm.c shard (version 1, uint16 tokens), 2 files, 7 tokens");
  // Without train files, all .bin files are the data.
  write_nanogpt(dir / "any/b.bin", {2});
  write_nanogpt(dir / "any/a.bin", {1});
  EXPECT_EQ(token_files(dir / "any"), (std::vector<std::string>{dir / "any/a.bin", dir / "any/b.bin"}));
}

// Ids 0..n-1 in one shard: a window's first token says where it starts.
std::shared_ptr<const TokenStream> counting_stream(const TempDir& dir, int64_t n) {
  write_gpt2_shard(dir / "count.bin", iota_ids(n));
  return std::make_shared<const TokenStream>(std::vector<std::string>{dir / "count.bin"}, 50257);
}

TEST(TokenFileWindows, WindowsOfContextPlusOneEveryContextTokensEachOncePerEpoch) {
  TempDir dir;
  constexpr int64_t T = 8, B = 2, W = 12;
  TokenFileWindows windows(counting_stream(dir, W * T + 1), B, T, 3, 2);
  EXPECT_EQ(windows.windows(), W);
  std::multiset<int64_t> starts;
  for (int k = 0; k < W / B; ++k) {
    const auto batch = windows.next();
    ASSERT_EQ(batch.inputs.sizes(), (std::vector<int64_t>{B, T}));
    ASSERT_EQ(batch.targets.sizes(), (std::vector<int64_t>{B, T}));
    EXPECT_EQ(batch.inputs.scalar_type(), torch::kInt64);
    for (int64_t r = 0; r < B; ++r) {
      const int64_t s = batch.inputs[r][0].item<int64_t>();
      EXPECT_EQ(s % T, 0) << "windows start every context tokens";
      EXPECT_TRUE(torch::equal(batch.inputs[r], torch::arange(s, s + T, torch::kInt64)));
      EXPECT_TRUE(torch::equal(batch.targets[r], torch::arange(s + 1, s + T + 1, torch::kInt64)));
      starts.insert(s);
    }
  }
  std::multiset<int64_t> every;
  for (int64_t w = 0; w < W; ++w) every.insert(w * T);
  EXPECT_EQ(starts, every);  // one epoch: every window exactly once
}

TEST(TokenFileWindows, TheSameSeedGivesTheSameBatches) {
  TempDir dir;
  const auto stream = counting_stream(dir, 200);
  TokenFileWindows a(stream, 3, 8, 11, 1), b(stream, 3, 8, 11, 3), c(stream, 3, 8, 12, 1);
  bool differs = false;
  for (int k = 0; k < 5; ++k) {
    const auto x = a.next(), y = b.next(), z = c.next();
    EXPECT_TRUE(torch::equal(x.inputs, y.inputs)) << "worker count changed batch " << k;
    differs = differs || !torch::equal(x.inputs, z.inputs);
  }
  EXPECT_TRUE(differs) << "another seed, another order";
}

TEST(TokenFileWindows, RanksReadDisjointWindowsThatTogetherAreTheSingleStream) {
  TempDir dir;
  constexpr int64_t T = 4, B = 2, W = 16;
  const auto stream = counting_stream(dir, W * T + 1);
  TokenFileWindows single(stream, B, T, 5, 1);
  TokenFileWindows rank0(stream, B, T, 5, 1, Shard{0, 2}), rank1(stream, B, T, 5, 2, Shard{1, 2});
  std::set<int64_t> seen0, seen1;
  for (int k = 0; k < W / B / 2; ++k) {  // one epoch: 8 global batches, 4 per rank
    const auto a = rank0.next(), b = rank1.next();
    EXPECT_TRUE(torch::equal(a.inputs, single.next().inputs)) << "rank 0 takes global batch " << 2 * k;
    EXPECT_TRUE(torch::equal(b.inputs, single.next().inputs)) << "rank 1 takes global batch " << 2 * k + 1;
    for (int64_t r = 0; r < B; ++r) {
      seen0.insert(a.inputs[r][0].item<int64_t>());
      seen1.insert(b.inputs[r][0].item<int64_t>());
    }
  }
  EXPECT_EQ(seen0.size(), static_cast<size_t>(W / 2));
  EXPECT_EQ(seen1.size(), static_cast<size_t>(W / 2));
  for (int64_t s : seen0) EXPECT_EQ(seen1.count(s), 0u) << "window at " << s << " read by both ranks";
}

// --- Bad input: an Error naming the file and the byte offset. ---

TEST(TokenFileErrors, WrongMagicInAFileNamedAsAnLlmcShard) {
  TempDir dir;
  write_bytes(dir / "fw_train_000001.bin", llmc_bytes(20240521, 1, 4, {1, 2, 3, 4}, 2));
  const auto e = error_of<Error>([&] { TokenFile(dir / "fw_train_000001.bin", false); });
  EXPECT_TRUE(contains(e, dir / "fw_train_000001.bin: byte offset 0: magic 20240521 is not llm.c's")) << e;
}

TEST(TokenFileErrors, WrongMagicAmongLlmcShards) {
  TempDir dir;
  write_gpt2_shard(dir / "d/a.bin", iota_ids(4));
  write_bytes(dir / "d/b.bin", llmc_bytes(7, 1, 4, {1, 2, 3, 4}, 2));
  const auto e = error_of<Error>([&] { TokenStream(token_files(dir / "d"), 50257); });
  EXPECT_TRUE(contains(e, "b.bin: byte offset 0: magic 7 is not llm.c's")) << e;
  EXPECT_TRUE(contains(e, "the other files are")) << e;
}

TEST(TokenFileErrors, AVersionThatDoesNotGoWithTheMagic) {
  TempDir dir;
  write_bytes(dir / "s.bin", llmc_bytes(kLlmcGpt2Magic, 7, 2, {1, 2}, 2));
  const auto e = error_of<Error>([&] { TokenFile(dir / "s.bin", false); });
  EXPECT_TRUE(contains(e, "s.bin: byte offset 4: version 7 does not go with magic 20240520")) << e;
}

TEST(TokenFileErrors, TruncatedHeader) {
  TempDir dir;
  auto bytes = llmc_bytes(kLlmcLlama3Magic, 7, 0, {}, 4);
  bytes.resize(500);
  write_bytes(dir / "h.bin", bytes);
  const auto e = error_of<Error>([&] { TokenFile(dir / "h.bin", false); });
  EXPECT_TRUE(contains(e, "h.bin: byte offset 500: truncated header")) << e;
}

TEST(TokenFileErrors, BodyShorterThanTheHeaderCount) {
  TempDir dir;
  write_bytes(dir / "t.bin", llmc_bytes(kLlmcGpt2Magic, 1, 10, iota_ids(6), 2));
  const auto e = error_of<Error>([&] { TokenFile(dir / "t.bin", false); });
  EXPECT_TRUE(contains(e, "t.bin: byte offset 1036: truncated body: the header (byte offset 8) counts 10 tokens")) << e;
  // Half a uint32 token is truncated too.
  auto half = llmc_bytes(kLlmcLlama3Magic, 7, 2, {5, 6}, 4);
  half.pop_back();
  write_bytes(dir / "u.bin", half);
  EXPECT_TRUE(contains(error_of<Error>([&] { TokenFile(dir / "u.bin", false); }), "u.bin: byte offset 1031"));
}

TEST(TokenFileErrors, BodyLongerThanTheHeaderCount) {
  TempDir dir;
  write_bytes(dir / "l.bin", llmc_bytes(kLlmcGpt2Magic, 1, 3, iota_ids(5), 2));
  const auto e = error_of<Error>([&] { TokenFile(dir / "l.bin", false); });
  EXPECT_TRUE(contains(e, "l.bin: byte offset 1030: 4 bytes follow the header's 3 tokens")) << e;
}

TEST(TokenFileErrors, NegativeTokenCount) {
  TempDir dir;
  write_bytes(dir / "n.bin", llmc_bytes(kLlmcGpt2Magic, 1, -1, {}, 2));
  EXPECT_TRUE(contains(error_of<Error>([&] { TokenFile(dir / "n.bin", false); }), "n.bin: byte offset 8"));
}

TEST(TokenFileErrors, OddSizedOrEmptyNanoGptFile) {
  TempDir dir;
  write_bytes(dir / "odd.bin", {1, 0, 2, 0, 3});
  auto e = error_of<Error>([&] { TokenFile(dir / "odd.bin", false); });
  EXPECT_TRUE(contains(e, "odd.bin: byte offset 4: the file has 5 bytes, an odd number")) << e;
  write_bytes(dir / "empty.bin", {});
  e = error_of<Error>([&] { TokenFile(dir / "empty.bin", false); });
  EXPECT_TRUE(contains(e, "empty.bin: the file is empty")) << e;
}

TEST(TokenFileErrors, MixedTokenizers) {
  TempDir dir;
  write_gpt2_shard(dir / "d/a.bin", iota_ids(4));
  write_bytes(dir / "d/b.bin", llmc_bytes(kLlmcLlama3Magic, 7, 2, {1, 2}, 4));
  const auto e = error_of<Error>([&] { TokenStream(token_files(dir / "d"), 200000); });
  EXPECT_TRUE(contains(e, "one tokenizer")) << e;
}

TEST(TokenFileErrors, ATokenIdOutsideTheVocabularyWhenItsWindowIsRead) {
  TempDir dir;
  auto ids = iota_ids(9);
  ids[6] = 512;  // a GPT-2 id a tiny model (vocabulary 512) cannot embed
  write_gpt2_shard(dir / "v.bin", ids);
  auto stream = std::make_shared<const TokenStream>(std::vector<std::string>{dir / "v.bin"}, 512);
  TokenFileWindows windows(stream, 1, 8, 1, 1);  // one window: tokens 0..8
  const auto e = error_of<Error>([&] { windows.next(); });
  EXPECT_TRUE(contains(e, "v.bin: byte offset 1036: token id 512 is outside the model's vocabulary of 512 ids")) << e;
  // Llama 3 ids in a GPT-2-sized model.
  write_bytes(dir / "l.bin", llmc_bytes(kLlmcLlama3Magic, 7, 3, {1, 128000, 2}, 4));
  auto llama = std::make_shared<const TokenStream>(std::vector<std::string>{dir / "l.bin"}, 50257);
  TokenFileWindows w2(llama, 1, 2, 1, 1);
  EXPECT_TRUE(contains(error_of<Error>([&] { w2.next(); }), "l.bin: byte offset 1028: token id 128000"));
}

TEST(TokenFileErrors, AStreamShorterThanOneWindow) {
  TempDir dir;
  write_nanogpt(dir / "short.bin", iota_ids(8));
  auto stream = std::make_shared<const TokenStream>(std::vector<std::string>{dir / "short.bin"}, 50257);
  const auto e = error_of<Error>([&] { TokenFileWindows(stream, 1, 8, 1, 1); });
  EXPECT_TRUE(contains(e, "short.bin: byte offset 16: the data ends after 8 tokens")) << e;
  EXPECT_TRUE(contains(e, "fewer than one window of 9")) << e;
  TokenFileWindows fits(stream, 1, 7, 1, 1);  // 8 tokens are one window of context 7
  EXPECT_EQ(fits.windows(), 1);
}

TEST(TokenFileErrors, MissingPathsAndFoldersWithoutTokenFilesAreUsageErrors) {
  TempDir dir;
  EXPECT_TRUE(contains(error_of<UsageError>([&] { token_files(dir / "nothing"); }), "no such file or folder"));
  write_bytes(dir / "text/a.txt", {'a'});
  EXPECT_TRUE(contains(error_of<UsageError>([&] { token_files(dir / "text"); }), "holds no .bin token files"));
}

}  // namespace
}  // namespace tbd
