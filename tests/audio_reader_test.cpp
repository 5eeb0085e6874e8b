// FLAC/WAV through libsndfile, and LibriSpeech-style folders. The files are
// written with libsndfile's own writer (write_audio), then read back. Built
// without libsndfile, only the "says so" test runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/data/audio_file.h"
#include "tbd/data/librispeech.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;

// Skips the test when tbd was built without libsndfile.
#define REQUIRE_SNDFILE() \
  if (!audio_support_built()) GTEST_SKIP() << "built without libsndfile"

constexpr auto kWav = AudioFormat::wav;
constexpr auto kFlac = AudioFormat::flac;

// A tone of `seconds` at `rate` Hz, `channels` channels (channel c scaled by 1/(c+1)).
std::vector<float> write_tone(const std::string& path, AudioFormat format, int rate, double seconds, int channels = 1) {
  const auto frames = static_cast<size_t>(seconds * rate);
  std::vector<float> mono(frames), interleaved(frames * static_cast<size_t>(channels));
  for (size_t i = 0; i < frames; ++i) {
    mono[i] = 0.5f * static_cast<float>(std::sin(2 * 3.14159265358979 * 440.0 * static_cast<double>(i) / rate));
    for (int c = 0; c < channels; ++c)
      interleaved[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] = mono[i] / static_cast<float>(c + 1);
  }
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_audio(path, interleaved, rate, channels, format);
  return mono;
}

TEST(AudioFile, WavAndFlacRoundTrip) {
  REQUIRE_SNDFILE();
  TempDir dir;
  for (AudioFormat format : {kWav, kFlac}) {
    const std::string path = dir / (format == kWav ? "a.wav" : "a.flac");
    const auto written = write_tone(path, format, 16000, 0.25);
    const auto info = audio_info(path);
    EXPECT_EQ(info.frames, 4000);
    EXPECT_EQ(info.sample_rate, 16000);
    const auto read = read_audio(path, 16000);
    ASSERT_EQ(read.size(), written.size());
    double worst = 0;
    for (size_t i = 0; i < read.size(); ++i) worst = std::max(worst, std::abs(double(read[i]) - written[i]));
    EXPECT_LT(worst, 1e-4) << path;  // 16-bit quantisation
  }
}

TEST(AudioFile, StereoIsMixedToMono) {
  REQUIRE_SNDFILE();
  TempDir dir;
  const auto mono = write_tone(dir / "s.wav", kWav, 16000, 0.1, 2);
  const auto read = read_audio(dir / "s.wav", 16000);
  ASSERT_EQ(read.size(), mono.size());
  EXPECT_NEAR(read[100], 0.75 * mono[100], 1e-4);  // (x + x/2) / 2
}

TEST(AudioFile, OtherSampleRatesAreRefusedClearly) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_tone(dir / "cd.flac", kFlac, 44100, 0.1);
  const std::string e = error_of<Error>([&] { read_audio(dir / "cd.flac", 16000); });
  EXPECT_NE(e.find(dir / "cd.flac" + ": sample rate 44100 Hz, but 16000 Hz is needed"), std::string::npos) << e;
}

TEST(AudioFile, CorruptAndTruncatedFilesNameTheFile) {
  REQUIRE_SNDFILE();
  TempDir dir;
  testing::write_bytes(dir / "noise.wav", std::vector<uint8_t>(500, 0x5a));
  std::string e = error_of<Error>([&] { read_audio(dir / "noise.wav", 16000); });
  EXPECT_NE(e.find(dir / "noise.wav" + ": not readable audio"), std::string::npos) << e;

  // Headers cut short, and a FLAC stream cut in the middle of its frames.
  for (const char* name : {"t.wav", "t.flac"}) {
    write_tone(dir / name, std::string(name) == "t.wav" ? kWav : kFlac, 16000, 1.0);
    const auto size = std::filesystem::file_size(dir / name);
    std::filesystem::copy_file(dir / name, dir / (std::string("head_") + name));
    std::filesystem::resize_file(dir / (std::string("head_") + name), 20);
    e = error_of<Error>([&] { read_audio(dir / (std::string("head_") + name), 16000); });
    EXPECT_NE(e.find("head_" + std::string(name) + ": "), std::string::npos) << e;
    if (std::string(name) == "t.flac") {
      std::filesystem::resize_file(dir / name, size / 2);
      e = error_of<Error>([&] { read_audio(dir / name, 16000); });
      EXPECT_NE(e.find(dir / name + ": truncated or corrupt audio"), std::string::npos) << e;
    }
  }
  e = error_of<Error>([&] { read_audio(dir / "missing.flac", 16000); });
  EXPECT_NE(e.find("missing.flac"), std::string::npos) << e;
}

// A 16 kHz mono 16-bit WAV written byte by byte: `samples` samples of data,
// a data chunk that declares `declared` bytes, and optionally an odd-sized
// LIST chunk (padded to even) before it.
std::vector<uint8_t> wav_bytes(uint32_t samples, uint32_t declared, bool list_chunk = false) {
  std::vector<uint8_t> b;
  const auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  const auto u16 = [&](uint16_t v) {
    for (int i = 0; i < 2; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  const auto tag = [&](const char* t) { b.insert(b.end(), t, t + 4); };
  tag("RIFF");
  u32(0);  // patched below
  tag("WAVE");
  tag("fmt ");
  u32(16);
  u16(1);  // PCM
  u16(1);
  u32(16000);
  u32(32000);
  u16(2);
  u16(16);
  if (list_chunk) {
    tag("LIST");
    u32(5);
    tag("INFO");
    b.push_back('x');
    b.push_back(0);  // the pad byte of an odd-sized chunk
  }
  tag("data");
  u32(declared);
  for (uint32_t i = 0; i < samples; ++i) u16(static_cast<uint16_t>((i * 37) % 2000));
  const uint32_t riff = static_cast<uint32_t>(b.size() - 8);
  for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<uint8_t>(riff >> (8 * i));
  return b;
}

TEST(AudioFile, WavWhoseDataChunkRunsPastTheEndIsRefused) {
  REQUIRE_SNDFILE();
  TempDir dir;
  // libsndfile alone would read the 1000 samples that are there and say nothing.
  testing::write_bytes(dir / "cut.wav", wav_bytes(1000, 100000));
  std::string e = error_of<Error>([&] { read_audio(dir / "cut.wav", 16000); });
  EXPECT_NE(e.find(dir / "cut.wav" + ": truncated WAV: its data chunk declares 100000 bytes but the file ends "
                                     "after 2000"),
            std::string::npos)
      << e;
  testing::write_bytes(dir / "cut_list.wav", wav_bytes(1000, 2002, true));
  e = error_of<Error>([&] { read_audio(dir / "cut_list.wav", 16000); });
  EXPECT_NE(e.find(dir / "cut_list.wav" + ": truncated WAV"), std::string::npos) << e;
  // A WAV file that libsndfile wrote, cut short by a failed copy.
  write_tone(dir / "tone.wav", kWav, 16000, 0.5);
  std::filesystem::resize_file(dir / "tone.wav", std::filesystem::file_size(dir / "tone.wav") - 1000);
  e = error_of<Error>([&] { read_audio(dir / "tone.wav", 16000); });
  EXPECT_NE(e.find(dir / "tone.wav" + ": truncated WAV: its data chunk declares 16000 bytes"), std::string::npos) << e;

  // Complete files, a chunk before the data, and the "length unknown" of streaming writers read as before.
  testing::write_bytes(dir / "ok.wav", wav_bytes(1000, 2000));
  testing::write_bytes(dir / "list.wav", wav_bytes(1000, 2000, true));
  testing::write_bytes(dir / "stream.wav", wav_bytes(1000, 0xFFFFFFFFu));
  for (const char* name : {"ok.wav", "list.wav", "stream.wav"}) {
    const auto samples = read_audio(dir / name, 16000);
    ASSERT_EQ(samples.size(), 1000u) << name;
    EXPECT_NEAR(samples[1], 37.0 / 32768, 1e-7) << name;
  }
}

// A 16 kHz mono float32 WAV (format 3, IEEE float) of `values`.
std::vector<uint8_t> float_wav_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> b;
  const auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  const auto u16 = [&](uint16_t v) {
    for (int i = 0; i < 2; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  const auto tag = [&](const char* t) { b.insert(b.end(), t, t + 4); };
  const auto bytes = static_cast<uint32_t>(values.size() * 4);
  tag("RIFF");
  u32(36 + bytes);
  tag("WAVE");
  tag("fmt ");
  u32(16);
  u16(3);  // IEEE float
  u16(1);
  u32(16000);
  u32(64000);
  u16(4);
  u16(32);
  tag("data");
  u32(bytes);
  for (float v : values) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  return b;
}

TEST(AudioFile, NanOrInfiniteSamplesNameTheFile) {
  REQUIRE_SNDFILE();
  TempDir dir;
  std::vector<float> values(100, 0.25f);
  testing::write_bytes(dir / "fine.wav", float_wav_bytes(values));
  EXPECT_NEAR(read_audio(dir / "fine.wav", 16000)[7], 0.25, 1e-6);
  values[42] = std::nanf("");
  testing::write_bytes(dir / "nan.wav", float_wav_bytes(values));
  std::string e = error_of<Error>([&] { read_audio(dir / "nan.wav", 16000); });
  EXPECT_NE(e.find(dir / "nan.wav" + ": sample 42 is NaN"), std::string::npos) << e;
  values[42] = 0;
  values[7] = INFINITY;
  testing::write_bytes(dir / "inf.wav", float_wav_bytes(values));
  e = error_of<Error>([&] { read_audio(dir / "inf.wav", 16000); });
  EXPECT_NE(e.find(dir / "inf.wav" + ": sample 7 is infinite"), std::string::npos) << e;
}

TEST(AudioFile, EmptyAndHeaderOnlyFlacSayWhatIsWrong) {
  REQUIRE_SNDFILE();
  TempDir dir;
  testing::write_bytes(dir / "empty.flac", {});
  std::string e = error_of<Error>([&] { read_audio(dir / "empty.flac", 16000); });
  EXPECT_NE(e.find(dir / "empty.flac" + ": the file is empty (0 bytes)"), std::string::npos) << e;
  // The FLAC header (fLaC, STREAMINFO and the other metadata blocks) without a single audio frame.
  write_tone(dir / "t.flac", kFlac, 16000, 0.5);
  std::ifstream in(dir / "t.flac", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 4;
  for (bool last = false; !last && at + 4 <= bytes.size();) {
    last = bytes[at] & 0x80;
    at += 4 + (size_t{bytes[at + 1]} << 16 | size_t{bytes[at + 2]} << 8 | bytes[at + 3]);
  }
  ASSERT_LT(at, bytes.size());
  bytes.resize(at);
  testing::write_bytes(dir / "header.flac", bytes);
  e = error_of<Error>([&] { read_audio(dir / "header.flac", 16000); });
  EXPECT_NE(e.find(dir / "header.flac" + ": holds no audio frames"), std::string::npos) << e;
  EXPECT_EQ(e.find("No Error"), std::string::npos) << e;
  // The same header claiming an unknown length (total samples 0): read to the end, still nothing.
  bytes[8 + 13] &= 0xF0;
  for (int k = 1; k <= 4; ++k) bytes[8 + 13 + k] = 0;
  testing::write_bytes(dir / "unknown.flac", bytes);
  e = error_of<Error>([&] { read_audio(dir / "unknown.flac", 16000); });
  EXPECT_NE(e.find(dir / "unknown.flac" + ": holds no audio frames"), std::string::npos) << e;
}

// LibriSpeech layout: speaker/chapter/speaker-chapter.trans.txt beside the audio.
void write_corpus(const TempDir& dir) {
  write_tone(dir / "19/198/19-198-0000.flac", kFlac, 16000, 0.4);
  write_tone(dir / "19/198/19-198-0001.wav", kWav, 16000, 0.3);
  std::ofstream(dir / "19/198/19-198.trans.txt") << "19-198-0000 HELLO WORLD\n19-198-0001 it's ok\n";
}

TEST(LibriSpeech, FolderIsScannedWithTranscripts) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  LibriSpeechFolder folder(dir.path().string());
  ASSERT_EQ(folder.size(), 2);
  EXPECT_NE(folder.utterance(0).audio_path.find("19-198-0000.flac"), std::string::npos);
  // H=9, E=6, L=13, O=16, space=28 in "_'ABC…Z ".
  EXPECT_EQ(folder.utterance(0).transcript, (std::vector<int64_t>{9, 6, 13, 13, 16, 28, 24, 16, 19, 13, 5}));
  EXPECT_EQ(folder.utterance(1).transcript.size(), 7u);  // lower case folds to upper
  EXPECT_EQ(folder.utterance(1).transcript[2], 1);       // the apostrophe
}

TEST(LibriSpeech, BatchesCarrySpectrogramsAndTranscripts) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  LibriSpeechBatches batches(std::make_shared<const LibriSpeechFolder>(dir.path().string()), 2, 1, 1);
  const auto b = batches.next();
  EXPECT_EQ(b.features.size(2), 161);
  EXPECT_EQ(b.features.size(3), 41);  // 0.4 s: 6400 samples / 160 + 1
  EXPECT_EQ(b.frames.sum().item<int64_t>(), 41 + 31);
  EXPECT_EQ(b.target_lengths.sum().item<int64_t>(), 11 + 7);
  EXPECT_NEAR(b.audio_seconds, 0.7, 1e-9);
}

TEST(LibriSpeech, BadTranscriptsNameFileAndLine) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  const std::string t = dir / "19/198/19-198.trans.txt";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"19-198-0000 HELLO\n19-198-0001\n", t + ":2: expected `ID TEXT`"},
      {"19-198-0000 HELLO 42\n", t + ":1: character '4' is not in the alphabet"},
      {"19-198-0000 HELLO\n\n19-198-0009 GONE\n", t + ":3: no audio file 19-198-0009.flac or 19-198-0009.wav"},
  };
  for (const auto& [text, message] : cases) {
    std::ofstream(t) << text;
    const std::string e = error_of<Error>([&] { LibriSpeechFolder f(dir.path().string()); });
    EXPECT_NE(e.find(message), std::string::npos) << e;
  }
  TempDir empty;
  EXPECT_NE(error_of<UsageError>([&] { LibriSpeechFolder f(empty.path().string()); }).find("no utterances"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { LibriSpeechFolder f(empty / "nowhere"); }).find("no such folder"),
            std::string::npos);
}

TEST(LibriSpeech, SymlinkLoopNamesThePath) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  const std::string loop = dir / "19/198/loop.trans.txt";
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  const std::string e = error_of<Error>([&] { LibriSpeechFolder f(dir.path().string()); });
  EXPECT_NE(e.find(loop + ": a loop of symbolic links"), std::string::npos) << e;
}

TEST(LibriSpeech, UnreadableAudioNamesTheFileWhenBatched) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  testing::write_bytes(dir / "19/198/19-198-0001.wav", std::vector<uint8_t>(300, 7));
  LibriSpeechBatches batches(std::make_shared<const LibriSpeechFolder>(dir.path().string()), 2, 1, 1);
  const std::string e = error_of<Error>([&] { batches.next(); });
  EXPECT_NE(e.find("19-198-0001.wav: not readable audio"), std::string::npos) << e;
}

TEST(LibriSpeech, DeepSpeech2TrainsOnAFolder) {
  REQUIRE_SNDFILE();
  TempDir dir;
  write_corpus(dir);
  testing::WorkloadUnderTest t("deepspeech2", Scale::tiny, {}, 2, c10::ScalarType::Float, dir.path().string());
  const auto losses = t.train_on_one_batch(2);
  EXPECT_TRUE(std::isfinite(losses[1]));
  EXPECT_NEAR(t.workload->configuration()["audio_seconds_per_utterance"].get<double>(), 0.35, 1e-9);
}

TEST(AudioFile, WithoutLibsndfileTheFormatSaysSo) {
  if (audio_support_built()) GTEST_SKIP() << "built with libsndfile";
  EXPECT_NE(error_of<Error>([] { read_audio("x.flac", 16000); }).find("without libsndfile"), std::string::npos);
  TempDir dir;
  EXPECT_NE(error_of<UsageError>([&] { LibriSpeechFolder f(dir.path().string()); }).find("without libsndfile"),
            std::string::npos);
}

}  // namespace
}  // namespace tbd
