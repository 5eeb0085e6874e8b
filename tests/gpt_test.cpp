#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/data/byte_text.h"
#include "tbd/nn/gpt.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;
using testing::WorkloadUnderTest;

// Closed form, from the layer shapes: token table V·d, position table T·d;
// per block two LayerNorms (4d), Q/K/V/output projections (4d² + 4d), MLP
// d→4d (4d² + 4d) and 4d→d (4d² + d): 12d² + 13d; final LayerNorm 2d. The
// output projection is the token table (tied), so it adds nothing.
int64_t gpt_parameters(int64_t v, int64_t t, int64_t layers, int64_t d) {
  return v * d + t * d + layers * (12 * d * d + 13 * d) + 2 * d;
}

TEST(Gpt, FullScaleHasExactlyTheGpt2SmallCount) {
  const auto w = create_workload("gpt");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "gpt")), 124'439'808);
  EXPECT_EQ(gpt_parameters(50257, 1024, 12, 768), 124'439'808);
}

TEST(Gpt, TinyCountMatchesTheClosedForm) {
  nn::GptConfig c;
  c.vocabulary = 512, c.context = 32, c.layers = 2, c.heads = 2, c.d_model = 32;
  EXPECT_EQ(count_parameters(*nn::Gpt(c)), gpt_parameters(512, 32, 2, 32));
  WorkloadUnderTest t("gpt", Scale::tiny, {}, 4);
  EXPECT_EQ(t.workload->state().parameter_count(), gpt_parameters(512, 32, 2, 32));
}

TEST(Gpt, SmallScaleSetsUpWithItsClosedFormCount) {
  WorkloadUnderTest t("gpt", Scale::small, {}, 1);
  EXPECT_EQ(t.workload->state().parameter_count(), gpt_parameters(50257, 256, 6, 384));
}

TEST(Gpt, PalmModelFlopsPerToken) {
  // GPT-2 small: N = 124,439,808 − 1024·768 (position table) = 123,653,376;
  // 6N = 741,920,256; 12·12·12·64·1024 = 113,246,208.
  EXPECT_EQ(nn::palm_flops_per_token(123'653'376, 12, 12, 64, 1024), 855'166'464);
  WorkloadUnderTest t("gpt", Scale::tiny, {}, 4);
  const auto c = t.workload->configuration();
  const int64_t n = gpt_parameters(512, 32, 2, 32) - 32 * 32;
  EXPECT_EQ(c["model_flops"]["N_parameters_without_position_embedding"].get<int64_t>(), n);
  EXPECT_EQ(c["model_flops"]["per_token"].get<int64_t>(), 6 * n + 12 * 2 * 2 * 16 * 32);
  EXPECT_EQ(c["model_flops"]["per_iteration"].get<int64_t>(), (6 * n + 12 * 2 * 2 * 16 * 32) * 4 * 32);
}

TEST(Gpt, TinyStepGivesFiniteLossNearLogVocabulary) {
  WorkloadUnderTest t("gpt", Scale::tiny, {}, 4);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 4 * 32);
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{4, 32}));
  // Targets are the inputs shifted by one position.
  EXPECT_TRUE(torch::equal(b.inputs[0].narrow(1, 1, 31), b.targets[0].narrow(1, 0, 31)));
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(512.0), 0.5);  // N(0, 0.02) weights: nearly uniform predictions
}

TEST(Gpt, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("gpt", Scale::tiny, {{"lr", "0.003"}}, 8);
  const auto losses = t.train_on_one_batch(30);
  EXPECT_LT(losses.back(), losses.front() - 1.0) << losses.front() << " -> " << losses.back();
}

TEST(Gpt, AttentionIsCausal) {
  nn::GptConfig c;
  c.vocabulary = 64, c.context = 16, c.layers = 2, c.heads = 2, c.d_model = 16, c.dropout = 0.0;
  nn::Gpt model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(64, {1, 16}, torch::kInt64);
  auto changed = ids.clone();
  changed[0][10] = (ids[0][10].item<int64_t>() + 1) % 64;
  const auto a = model->forward(ids), b = model->forward(changed);
  EXPECT_TRUE(torch::allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10)));  // the past ignores the future
  EXPECT_FALSE(torch::allclose(a.narrow(1, 10, 1), b.narrow(1, 10, 1)));
}

// The workload decays parameters with dim ≥ 2; those left out must be
// exactly the biases and LayerNorm parameters.
TEST(Gpt, UndecayedParametersAreBiasesAndNorms) {
  nn::GptConfig c;
  c.vocabulary = 512, c.context = 32, c.layers = 2, c.heads = 2, c.d_model = 32;
  int64_t matrices = 0, vectors = 0;
  for (const auto& p : nn::Gpt(c)->parameters()) (p.dim() >= 2 ? matrices : vectors) += p.numel();
  // Vectors: per block 2 LayerNorms (4d) + 4 attention biases (4d) + MLP biases (4d + d); final LayerNorm 2d.
  EXPECT_EQ(vectors, 2 * (13 * 32) + 2 * 32);
  EXPECT_EQ(matrices + vectors, gpt_parameters(512, 32, 2, 32));
}

namespace {

// Every token of the stream, read through ByteText::read from each start.
std::vector<int32_t> all_tokens(const ByteText& text) {
  std::vector<int64_t> tokens(static_cast<size_t>(text.size()));
  text.read(0, text.size(), tokens.data());
  for (int64_t start = 1; start < text.size(); ++start) {  // reads that begin mid-stream agree
    int64_t tail[2] = {-1, -1};
    const int64_t n = std::min<int64_t>(2, text.size() - start);
    text.read(start, n, tail);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(tail[i], tokens[static_cast<size_t>(start + i)]) << start;
  }
  return {tokens.begin(), tokens.end()};
}

}  // namespace

TEST(ByteText, ReadsFilesAsBytesWithEndOfText) {
  TempDir dir;
  std::string text = "h\xC3\xA9llo\n";  // "héllo": é is two bytes
  testing::write_bytes(dir / "docs/a.txt", std::vector<uint8_t>(text.begin(), text.end()));
  testing::write_bytes(dir / "docs/b.txt", {'o', 'k'});
  testing::write_bytes(dir / "docs/.hidden", {0xFF});
  const ByteText docs(dir / "docs", 511);
  const std::vector<int32_t> expected = {'h', 0xC3, 0xA9, 'l', 'l', 'o', '\n', 511, 'o', 'k', 511};
  EXPECT_EQ(docs.size(), 11);
  EXPECT_EQ(all_tokens(docs), expected);
  EXPECT_EQ(all_tokens(ByteText(dir / "docs/b.txt", 9)), (std::vector<int32_t>{'o', 'k', 9}));
}

// Files of 1 MiB or more are mapped, smaller ones copied into one buffer:
// the stream reads the same across both kinds and their boundaries.
TEST(ByteText, MappedAndCopiedFilesReadAsOneStream) {
  TempDir dir;
  std::vector<uint8_t> big((1 << 20) + 5);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>('a' + i % 26);
  testing::write_bytes(dir / "docs/1.txt", {'x', 'y'});
  testing::write_bytes(dir / "docs/2.txt", big);
  testing::write_bytes(dir / "docs/3.txt", {'z'});
  const ByteText text(dir / "docs", 300);
  const auto n = static_cast<int64_t>(big.size());
  ASSERT_EQ(text.size(), 3 + (n + 1) + 2);
  std::vector<int64_t> tokens(static_cast<size_t>(text.size()));
  text.read(0, text.size(), tokens.data());
  EXPECT_EQ(tokens[0], 'x');
  EXPECT_EQ(tokens[2], 300);
  EXPECT_EQ(tokens[3], 'a');
  EXPECT_EQ(tokens[static_cast<size_t>(3 + n - 1)], big.back());
  EXPECT_EQ(tokens[static_cast<size_t>(3 + n)], 300);
  EXPECT_EQ(tokens[static_cast<size_t>(4 + n)], 'z');
  EXPECT_EQ(tokens.back(), 300);
  int64_t across[4];  // the big file's last two bytes, its end-of-text, the next file
  text.read(3 + n - 2, 4, across);
  EXPECT_EQ(std::vector<int64_t>(across, across + 4),
            (std::vector<int64_t>{big[big.size() - 2], big.back(), 300, 'z'}));
}

TEST(ByteText, RejectsBadFilesNamingFileAndLine) {
  TempDir dir;
  testing::write_bytes(dir / "bad.txt", {'a', '\n', 'b', '\n', 'c', 0xC3, '\n'});  // truncated 2-byte sequence
  EXPECT_NE(error_of<Error>([&] { ByteText(dir / "bad.txt", 511); }).find("bad.txt:3: invalid UTF-8"),
            std::string::npos);
  testing::write_bytes(dir / "empty.txt", {});
  EXPECT_NE(error_of<Error>([&] { ByteText(dir / "empty.txt", 511); }).find("empty.txt: the file is empty"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { ByteText(dir / "missing", 511); }).find("no such file"), std::string::npos);
  testing::write_bytes(dir / "short.txt", {'a', 'b'});
  auto text = std::make_shared<const ByteText>(dir / "short.txt", 511);
  EXPECT_NE(error_of<Error>([&] { TokenWindows(text, 2, 32, 1, 1); }).find("fewer than one window of 33"),
            std::string::npos);
}

TEST(ByteText, DevicesAndSymlinkLoopsAreNamedForWhatTheyAre) {
  // /dev/null exists: "no such file" would send the user looking for a typo.
  std::string e = error_of<UsageError>([] { ByteText("/dev/null", 511); });
  EXPECT_NE(e.find("--data /dev/null: not a regular file (a device, pipe or socket)"), std::string::npos) << e;
  EXPECT_EQ(e.find("no such file"), std::string::npos) << e;
  TempDir dir;
  testing::write_bytes(dir / "docs/a.txt", {'o', 'k'});
  const std::string loop = dir / "docs/loop.txt";
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  for (const std::string& path : {dir / "docs", loop}) {
    e = error_of<Error>([&] { ByteText(path, 511); });
    EXPECT_NE(e.find(loop + ": a loop of symbolic links"), std::string::npos) << e;
  }
}

TEST(ByteText, GptTrainsOnATextFile) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20; ++i) text += "the quick brown fox jumps over the lazy dog\n";
  testing::write_bytes(dir / "corpus.txt", std::vector<uint8_t>(text.begin(), text.end()));
  WorkloadUnderTest t("gpt", Scale::tiny, {}, 4, c10::ScalarType::Float, dir / "corpus.txt");
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 4 * 32);
  EXPECT_LE(b.inputs[0].max().item<int64_t>(), 511);
  EXPECT_TRUE(std::isfinite(t.step(b)));
}

}  // namespace
}  // namespace tbd
