#include "tbd/data/jpeg.h"

#include <turbojpeg.h>

#include <fstream>
#include <iterator>
#include <memory>

#include "tbd/core/error.h"

namespace tbd {
namespace {

struct HandleCloser {
  void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

}  // namespace

RgbImage decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& source) {
  Handle h(tjInitDecompress());
  if (!h) throw Error("cannot start the JPEG decoder: " + std::string(tjGetErrorStr2(nullptr)));
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (bytes.size() < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8)
    throw Error(source +
                ": not a JPEG file (no JPEG start marker); remove it from the data folder "
                "or convert it (e.g. `convert in.png out.jpg`)");
  if (tjDecompressHeader3(h.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp,
                          &colorspace) != 0)
    throw Error(source + ": corrupt or truncated JPEG header (" + tjGetErrorStr2(h.get()) +
                "); re-encode or remove the file");
  if (width <= 0 || height <= 0 || static_cast<int64_t>(width) * height > (1LL << 28))
    throw Error(source + ": implausible JPEG size " + std::to_string(width) + "x" + std::to_string(height));
  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.resize(static_cast<size_t>(width) * height * 3);
  // STOPONWARNING: a truncated file is an error here, not a gray-filled image.
  if (tjDecompress2(h.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), img.pixels.data(), width, 0,
                    height, TJPF_RGB, TJFLAG_STOPONWARNING) != 0)
    throw Error(source + ": corrupt or truncated JPEG data (" + tjGetErrorStr2(h.get()) +
                "); re-encode or remove the file");
  return img;
}

std::vector<uint8_t> encode_jpeg(const RgbImage& image, int quality) {
  Handle h(tjInitCompress());
  if (!h) throw Error("cannot start the JPEG encoder");
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(h.get(), image.pixels.data(), image.width, 0, image.height, TJPF_RGB, &out, &size, TJSAMP_420,
                  quality, 0) != 0) {
    tjFree(out);
    throw Error(std::string("JPEG encoding failed: ") + tjGetErrorStr2(h.get()));
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  return bytes;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": no such file or not readable");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace tbd
