#include "tbd/data/librispeech.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/data/audio_file.h"
#include "tbd/data/dataset_paths.h"
#include "tbd/data/spectrogram.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void read_transcript(const fs::path& file, std::vector<Utterance>& out) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot be read");
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are harmless
    const std::string where = file.string() + ":" + std::to_string(number);
    const auto space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 >= line.size())
      throw Error(where + ": expected `ID TEXT`, got '" + line + "'");
    const std::string id = line.substr(0, space);
    Utterance u;
    for (char c : line.substr(space + 1)) {
      const auto code = speech_char_id(c);
      if (!code)
        throw Error(where + ": character '" + std::string(1, c) +
                    "' is not in the alphabet (letters, apostrophe, space)");
      u.transcript.push_back(*code);
    }
    for (const char* ext : {".flac", ".wav"}) {
      const fs::path audio = file.parent_path() / (id + ext);
      if (path_kind(audio) != PathKind::missing) {
        u.audio_path = audio.string();
        break;
      }
    }
    if (u.audio_path.empty())
      throw Error(where + ": no audio file " + id + ".flac or " + id + ".wav beside the transcript");
    out.push_back(std::move(u));
  }
}

}  // namespace

LibriSpeechFolder::LibriSpeechFolder(const std::string& root) {
  if (path_kind(root) != PathKind::directory) throw UsageError("--data " + root + ": no such folder");
  if (!audio_support_built())
    throw UsageError("--data " + root +
                     ": tbd was built without libsndfile, so FLAC/WAV audio "
                     "cannot be read; install libsndfile1-dev and rebuild (scripts/setup)");
  std::vector<fs::path> transcripts;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (ends_with(it->path().filename().string(), ".trans.txt") && entry_kind(*it) == PathKind::regular)
      transcripts.push_back(it->path());
  if (ec) throw Error("--data " + root + ": cannot list the folder (" + ec.message() + ")");
  std::sort(transcripts.begin(), transcripts.end());  // a stable order, whatever the file system
  for (const auto& t : transcripts) read_transcript(t, utterances_);
  if (utterances_.empty())
    throw UsageError("--data " + root +
                     ": no utterances found; expected LibriSpeech-style "
                     "`*.trans.txt` files with lines `ID TEXT` beside ID.flac or ID.wav");
}

LibriSpeechBatches::LibriSpeechBatches(std::shared_ptr<const LibriSpeechFolder> folder, int64_t batch_size,
                                       uint64_t seed, int workers, Shard shard, int64_t frame_multiple)
    : folder_(std::move(folder)),
      batch_size_(batch_size),
      frame_multiple_(frame_multiple),
      order_(folder_->size(), seed),
      prefetcher_([this, shard](int64_t b) { return make(shard.global_batch(b)); }, workers, 2 * workers) {}

SpeechBatch LibriSpeechBatches::make(int64_t batch_index) {
  std::vector<torch::Tensor> spectrograms;
  std::vector<std::vector<int64_t>> transcripts;
  double seconds = 0;
  for (int64_t i = 0; i < batch_size_; ++i) {
    const Utterance& u = folder_->utterance(order_.item(batch_index * batch_size_ + i));
    std::vector<float> samples = read_audio(u.audio_path, kSpeechSampleRate);
    seconds += static_cast<double>(samples.size()) / kSpeechSampleRate;
    const auto wave = torch::from_blob(samples.data(), {static_cast<int64_t>(samples.size())}, torch::kFloat);
    auto spec = log_spectrogram(wave, u.audio_path);
    // CTC needs at least one output frame per character (two for a repeat).
    const int64_t out_frames = (spec.size(1) - 1) / 2 + 1;
    if (out_frames < static_cast<int64_t>(u.transcript.size()))
      throw Error(u.audio_path + ": " + std::to_string(u.transcript.size()) +
                  " characters of transcript "
                  "in " +
                  std::to_string(samples.size()) + " samples of audio: too short for CTC");
    spectrograms.push_back(spec);
    transcripts.push_back(u.transcript);
  }
  return collate_speech(spectrograms, transcripts, seconds, frame_multiple_);
}

}  // namespace tbd
