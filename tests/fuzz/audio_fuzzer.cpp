// Audio files (WAV, FLAC, or whatever libsndfile recognises) through the
// reader DeepSpeech2's LibriSpeech pipeline uses, then the spectrogram.
#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/audio_file.h"
#include "tbd/data/spectrogram.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The extension decides nothing (libsndfile looks at the content), but the
  // first byte picks one so both names are exercised.
  const char* name = size > 0 && (data[0] & 1) ? "input.flac" : "input.wav";
  const auto path = tbd::fuzz::write_scratch(name, tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    const auto samples = tbd::read_audio(path, 16000);
    if (samples.size() > (1u << 22)) return;  // long audio: correct, but slow per run
    auto copy = samples;
    tbd::log_spectrogram(torch::from_blob(copy.data(), {static_cast<int64_t>(copy.size())}), path);
  });
  return 0;
}
