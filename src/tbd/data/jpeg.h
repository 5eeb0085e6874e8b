// JPEG decoding and encoding with libjpeg-turbo (TurboJPEG API).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // height × width × 3, row-major
};

// Throws Error naming `source` when the bytes are not a complete, valid JPEG
// (libjpeg-turbo warnings such as a truncated file count as errors).
RgbImage decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& source);

std::vector<uint8_t> encode_jpeg(const RgbImage& image, int quality = 90);

// Whole file; throws Error naming the path.
std::vector<uint8_t> read_file_bytes(const std::string& path);

}  // namespace tbd
