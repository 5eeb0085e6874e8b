// A LibriSpeech folder through DeepSpeech2's reader: the input holds the
// transcript, a NUL, then the bytes of utterance 19-198-0000's audio, which
// the batch pipeline decodes into a spectrogram for CTC.
#include <filesystem>
#include <memory>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/librispeech.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view transcript = tbd::fuzz::as_text(data, size), audio;
  if (const auto nul = transcript.find('\0'); nul != std::string_view::npos) {
    audio = transcript.substr(nul + 1);
    transcript = transcript.substr(0, nul);
  }
  const auto root = tbd::fuzz::scratch_dir() / "LibriSpeech";
  std::filesystem::remove_all(root);
  tbd::fuzz::write_scratch("LibriSpeech/19/198/19-198.trans.txt", transcript);
  tbd::fuzz::write_scratch("LibriSpeech/19/198/19-198-0000.wav", audio);
  tbd::fuzz::expect_value_or_error([&] {
    auto folder = std::make_shared<const tbd::LibriSpeechFolder>(root.string());
    tbd::LibriSpeechBatches batches(folder, 1, 1, 1);
    batches.next();
  });
  return 0;
}
