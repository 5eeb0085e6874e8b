#include "tbd/data/speech_batch.h"

#include <algorithm>
#include <cctype>

#include "tbd/data/batch_pool.h"
#include "tbd/data/length_bucket.h"

namespace tbd {

const std::string& speech_alphabet() {
  static const std::string alphabet = "_'ABCDEFGHIJKLMNOPQRSTUVWXYZ ";
  return alphabet;
}

std::optional<int64_t> speech_char_id(char c) {
  if (c == '_') return std::nullopt;  // the blank is no character
  const auto pos = speech_alphabet().find(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (pos == std::string::npos) return std::nullopt;
  return static_cast<int64_t>(pos);
}

SpeechBatch collate_speech(const std::vector<torch::Tensor>& spectrograms,
                           const std::vector<std::vector<int64_t>>& transcripts, double audio_seconds,
                           int64_t frame_multiple) {
  const int64_t batch = static_cast<int64_t>(spectrograms.size());
  int64_t longest = 0, characters = 0;
  for (const auto& s : spectrograms) longest = std::max(longest, s.size(1));
  longest = bucketed_length(longest, frame_multiple);
  for (const auto& t : transcripts) characters += static_cast<int64_t>(t.size());
  SpeechBatch b;
  b.features = torch::zeros({batch, 1, spectrograms.empty() ? 0 : spectrograms[0].size(0), longest});
  b.frames = torch::empty({batch}, torch::kInt64);
  b.targets = torch::empty({characters}, torch::kInt64);
  b.target_lengths = torch::empty({batch}, torch::kInt64);
  auto frames = b.frames.accessor<int64_t, 1>();
  auto lengths = b.target_lengths.accessor<int64_t, 1>();
  auto targets = b.targets.accessor<int64_t, 1>();
  int64_t at = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const auto& s = spectrograms[static_cast<size_t>(i)];
    b.features[i][0].narrow(1, 0, s.size(1)).copy_(s);
    frames[i] = s.size(1);
    const auto& t = transcripts[static_cast<size_t>(i)];
    lengths[i] = static_cast<int64_t>(t.size());
    for (int64_t c : t) targets[at++] = c;
  }
  b.audio_seconds = audio_seconds;
  return b;
}

Batch to_training_batch(const SpeechBatch& s, c10::Device device) {
  Batch b;
  b.inputs = {to_device(s.features, device), s.frames};
  b.targets = {to_device(s.targets, device), s.target_lengths};
  b.samples = s.frames.size(0);
  b.audio_seconds = s.audio_seconds;
  return b;
}

}  // namespace tbd
