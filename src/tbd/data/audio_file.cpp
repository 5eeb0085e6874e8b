#include "tbd/data/audio_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "tbd/core/error.h"

#ifdef TBD_WITH_SNDFILE
#include <sndfile.h>
#endif

namespace tbd {

#ifdef TBD_WITH_SNDFILE

namespace {
namespace fs = std::filesystem;

struct CloseFile {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using File = std::unique_ptr<SNDFILE, CloseFile>;

File open_audio(const std::string& path, SF_INFO& info) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0 && !ec)
    throw Error(path + ": the file is empty (0 bytes); expected FLAC or WAV audio: re-create or remove it");
  info = SF_INFO{};
  File file(sf_open(path.c_str(), SFM_READ, &info));
  if (!file) {
    // libsndfile keeps the reason of a failed open in one global, which a
    // successful open in another prefetch thread can reset to "No Error.".
    const int code = sf_error(nullptr);
    const std::string why = code == SF_ERR_NO_ERROR ? "format not recognised" : sf_error_number(code);
    throw Error(path + ": not readable audio (" + why + "); expected a FLAC or WAV file");
  }
  return file;
}

uint32_t little_endian32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// libsndfile reads a WAV whose data chunk claims more bytes than the file
// holds (a copy or download cut short) as if the shorter length were meant:
// only its log says "should be". Walks the RIFF chunks and refuses such a
// file. 0xFFFFFFFF (and RF64's placeholder) is the "length unknown" of
// streaming writers and is accepted.
void check_wav_data_chunk(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!in || ec) return;  // libsndfile has opened it; nothing to add
  unsigned char header[12];
  if (!in.read(reinterpret_cast<char*>(header), 12) || std::memcmp(header, "RIFF", 4) != 0 ||
      std::memcmp(header + 8, "WAVE", 4) != 0)
    return;  // RF64, W64 and the rest: libsndfile's own checks
  uint64_t at = 12;
  unsigned char chunk[8];
  while (at + 8 <= size && in.seekg(static_cast<std::streamoff>(at)) && in.read(reinterpret_cast<char*>(chunk), 8)) {
    const uint32_t length = little_endian32(chunk + 4);
    if (std::memcmp(chunk, "data", 4) == 0) {
      if (length != 0xFFFFFFFFu && at + 8 + length > size)
        throw Error(path + ": truncated WAV: its data chunk declares " + std::to_string(length) +
                    " bytes but the file "
                    "ends after " +
                    std::to_string(size - at - 8) + "; the copy was cut short: copy or convert it again");
      return;
    }
    at += 8 + length + (length & 1);  // chunks are padded to an even length
  }
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
    throw Error(path + ": sample rate " + std::to_string(info.samplerate) + " Hz, but " + std::to_string(sample_rate) +
                " Hz is needed; resample the data set first (e.g. " + "`sox in.flac -r " + std::to_string(sample_rate) +
                " out.flac`)");
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV) check_wav_data_chunk(path);
  if (info.frames <= 0 || info.channels <= 0) throw Error(path + ": holds no audio samples");
  // Read in chunks, so a corrupt header claiming billions of frames costs
  // no more memory than the audio really decoded. A FLAC header may leave
  // the length unknown (SF_COUNT_MAX): then read to the end.
  const bool length_known = info.frames != SF_COUNT_MAX;
  std::vector<float> interleaved;
  sf_count_t got = 0;
  while (!length_known || got < info.frames) {
    const sf_count_t chunk = length_known ? std::min<sf_count_t>(info.frames - got, 1 << 16) : 1 << 16;
    interleaved.resize(static_cast<size_t>(got + chunk) * static_cast<size_t>(info.channels));
    const sf_count_t n = sf_readf_float(file.get(), interleaved.data() + got * info.channels, chunk);
    got += std::max<sf_count_t>(n, 0);
    if (n < chunk || sf_error(file.get()) != SF_ERR_NO_ERROR) break;
  }
  interleaved.resize(static_cast<size_t>(got) * static_cast<size_t>(info.channels));
  const bool decoder_error = sf_error(file.get()) != SF_ERR_NO_ERROR;
  if (got == 0 && !decoder_error)
    throw Error(path +
                ": holds no audio frames (only a header; the file is empty or was cut before its "
                "first frame); re-create or remove it");
  // A short read or a decoder error means the file is truncated or corrupt.
  if ((length_known && got != info.frames) || decoder_error)
    throw Error(path + ": truncated or corrupt audio (read " + std::to_string(got) + " of " +
                (length_known ? std::to_string(info.frames) : std::string("?")) + " frames" +
                (decoder_error ? std::string(": ") + sf_strerror(file.get()) : std::string("; the stream ends early")) +
                ")");
  info.frames = got;
  // A float WAV can hold NaN or Inf; found here, the file is named, not the learning rate blamed.
  for (size_t i = 0; i < interleaved.size(); ++i)
    if (!std::isfinite(interleaved[i]))
      throw Error(path + ": sample " + std::to_string(i / static_cast<size_t>(info.channels)) + " is " +
                  (std::isnan(interleaved[i]) ? "NaN" : "infinite") +
                  " (a floating-point file with invalid values); re-create or remove the file");
  if (info.channels == 1) return interleaved;
  std::vector<float> mono(static_cast<size_t>(info.frames));
  for (size_t i = 0; i < mono.size(); ++i) {
    float sum = 0;
    for (int c = 0; c < info.channels; ++c)
      sum += interleaved[i * static_cast<size_t>(info.channels) + static_cast<size_t>(c)];
    mono[i] = sum / static_cast<float>(info.channels);
  }
  return mono;
}

void write_audio(const std::string& path, const std::vector<float>& interleaved, int sample_rate, int channels,
                 AudioFormat format) {
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
  throw Error(path +
              ": tbd was built without libsndfile, so FLAC/WAV audio cannot be read; "
              "install libsndfile1-dev and rebuild (scripts/setup)");
}
}  // namespace

bool audio_support_built() { return false; }
AudioInfo audio_info(const std::string& path) { unsupported(path); }
std::vector<float> read_audio(const std::string& path, int) { unsupported(path); }
void write_audio(const std::string& path, const std::vector<float>&, int, int, AudioFormat) { unsupported(path); }

#endif

}  // namespace tbd
