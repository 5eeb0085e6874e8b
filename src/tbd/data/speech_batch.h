// Batches of utterances for CTC training: spectrograms padded to the longest
// one, their frame counts, and the transcripts as character ids over Deep
// Speech 2's 29-symbol alphabet (0 is the CTC blank).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

namespace tbd {

struct Batch;  // tbd/core/workload.h

// "_'ABCDEFGHIJKLMNOPQRSTUVWXYZ " : blank, apostrophe, letters, space.
const std::string& speech_alphabet();
// The id of a transcript character (lower case folds to upper); nullopt if
// it is not in the alphabet.
std::optional<int64_t> speech_char_id(char c);

struct SpeechBatch {
  torch::Tensor features;        // [B, 1, 161, T_max] float
  torch::Tensor frames;          // [B] int64: valid frames per utterance
  torch::Tensor targets;         // [Σ L] int64: the transcripts, concatenated
  torch::Tensor target_lengths;  // [B] int64
  double audio_seconds = 0;      // total audio in the batch
};

// inputs features (on `device`), frames; targets transcripts (on `device`),
// their lengths. Lengths stay on the host: packing and CTC read them there.
Batch to_training_batch(const SpeechBatch& s, c10::Device device);

// spectrograms: [161, T_i] each; transcripts: character ids each. The
// batch's frames are padded up to a multiple of `frame_multiple` (length
// bucketing: a bounded set of shapes; 1: the longest utterance exactly).
SpeechBatch collate_speech(const std::vector<torch::Tensor>& spectrograms,
                           const std::vector<std::vector<int64_t>>& transcripts, double audio_seconds,
                           int64_t frame_multiple = 1);

}  // namespace tbd
