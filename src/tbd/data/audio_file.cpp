#include "tbd/data/audio_file.h"

#include <memory>

#include "tbd/core/error.h"

#ifdef TBD_WITH_SNDFILE
#include <sndfile.h>
#endif

namespace tbd {

#ifdef TBD_WITH_SNDFILE

namespace {

struct CloseFile {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using File = std::unique_ptr<SNDFILE, CloseFile>;

File open_audio(const std::string& path, SF_INFO& info) {
  info = SF_INFO{};
  File file(sf_open(path.c_str(), SFM_READ, &info));
  if (!file)
    throw Error(path + ": not readable audio (" + sf_strerror(nullptr) +
                "); expected a FLAC or WAV file");
  return file;
}

}  // namespace

bool audio_support_built() { return true; }

AudioInfo audio_info(const std::string& path) {
  SF_INFO info;
  open_audio(path, info);
  return {static_cast<int64_t>(info.frames), info.samplerate, info.channels};
}

std::vector<float> read_audio(const std::string& path, int sample_rate) {
  SF_INFO info;
  File file = open_audio(path, info);
  if (info.samplerate != sample_rate)
    throw Error(path + ": sample rate " + std::to_string(info.samplerate) + " Hz, but " +
                std::to_string(sample_rate) + " Hz is needed; resample the data set first (e.g. " +
                "`sox in.flac -r " + std::to_string(sample_rate) + " out.flac`)");
  if (info.frames <= 0 || info.channels <= 0) throw Error(path + ": holds no audio samples");
  std::vector<float> interleaved(static_cast<size_t>(info.frames) * static_cast<size_t>(info.channels));
  const sf_count_t got = sf_readf_float(file.get(), interleaved.data(), info.frames);
  // A short read or a decoder error means the file is truncated or corrupt.
  if (got != info.frames || sf_error(file.get()) != SF_ERR_NO_ERROR)
    throw Error(path + ": truncated or corrupt audio (read " + std::to_string(got) + " of " +
                std::to_string(info.frames) + " frames: " + sf_strerror(file.get()) + ")");
  if (info.channels == 1) return interleaved;
  std::vector<float> mono(static_cast<size_t>(info.frames));
  for (size_t i = 0; i < mono.size(); ++i) {
    float sum = 0;
    for (int c = 0; c < info.channels; ++c) sum += interleaved[i * static_cast<size_t>(info.channels) + static_cast<size_t>(c)];
    mono[i] = sum / static_cast<float>(info.channels);
  }
  return mono;
}

void write_audio(const std::string& path, const std::vector<float>& interleaved, int sample_rate,
                 int channels, AudioFormat format) {
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = (format == AudioFormat::wav ? SF_FORMAT_WAV : SF_FORMAT_FLAC) | SF_FORMAT_PCM_16;
  File file(sf_open(path.c_str(), SFM_WRITE, &info));
  if (!file) throw Error(path + ": cannot write audio (" + sf_strerror(nullptr) + ")");
  const sf_count_t frames = static_cast<sf_count_t>(interleaved.size()) / channels;
  if (sf_writef_float(file.get(), interleaved.data(), frames) != frames)
    throw Error(path + ": short write (" + sf_strerror(file.get()) + ")");
}

#else

namespace {
[[noreturn]] void unsupported(const std::string& path) {
  throw Error(path + ": tbd was built without libsndfile, so FLAC/WAV audio cannot be read; "
              "install libsndfile1-dev and rebuild (scripts/setup)");
}
}  // namespace

bool audio_support_built() { return false; }
AudioInfo audio_info(const std::string& path) { unsupported(path); }
std::vector<float> read_audio(const std::string& path, int) { unsupported(path); }
void write_audio(const std::string& path, const std::vector<float>&, int, int, AudioFormat) { unsupported(path); }

#endif

}  // namespace tbd
