// Audio files through libsndfile (FLAC, WAV and whatever else it knows):
// decoded to mono float samples. Without libsndfile at build time the
// functions throw an Error saying so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

struct AudioInfo {
  int64_t frames = 0;
  int sample_rate = 0;
  int channels = 0;
};

bool audio_support_built();  // false when tbd was built without libsndfile

// Header only: throws Error naming the file when it is not readable audio.
AudioInfo audio_info(const std::string& path);

// All samples, channels averaged to mono, in [-1, 1]. Throws Error naming
// the file when it is unreadable, truncated, empty, or not at `sample_rate`
// Hz (deepspeech2 refuses other rates rather than resample silently).
std::vector<float> read_audio(const std::string& path, int sample_rate);

enum class AudioFormat { wav, flac };  // 16-bit PCM either way

// Writes interleaved samples in [-1, 1] (`channels` per frame) with
// libsndfile's writer: test corpora and small synthetic data sets.
void write_audio(const std::string& path, const std::vector<float>& interleaved, int sample_rate, int channels,
                 AudioFormat format);

}  // namespace tbd
