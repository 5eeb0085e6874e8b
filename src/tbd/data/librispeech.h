// A LibriSpeech-style corpus: folders (any depth) holding `*.trans.txt`
// transcripts with lines `ID TEXT`, and beside them the audio `ID.flac` or
// `ID.wav`. Transcripts are read and checked at start; audio is decoded on
// demand by the prefetching pipeline, converted to log spectrograms and
// batched for CTC.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"
#include "tbd/data/speech_batch.h"

namespace tbd {

struct Utterance {
  std::string audio_path;
  std::vector<int64_t> transcript;  // character ids
};

class LibriSpeechFolder {
 public:
  // Throws UsageError when the folder is missing or holds no transcript, and
  // Error naming file and line for a malformed transcript line, a character
  // outside the alphabet, or an ID without its audio file.
  explicit LibriSpeechFolder(const std::string& root);
  int64_t size() const { return static_cast<int64_t>(utterances_.size()); }
  const Utterance& utterance(int64_t i) const { return utterances_[static_cast<size_t>(i)]; }

 private:
  std::vector<Utterance> utterances_;
};

class LibriSpeechBatches {
 public:
  // frame_multiple: collate_speech's length bucket.
  LibriSpeechBatches(std::shared_ptr<const LibriSpeechFolder> folder, int64_t batch_size, uint64_t seed, int workers,
                     Shard shard = {}, int64_t frame_multiple = 1);
  SpeechBatch next() { return prefetcher_.next(); }  // throws Error naming a bad audio file

 private:
  SpeechBatch make(int64_t batch_index);
  std::shared_ptr<const LibriSpeechFolder> folder_;
  int64_t batch_size_, frame_multiple_;
  EpochShuffle order_;
  Prefetcher<SpeechBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
