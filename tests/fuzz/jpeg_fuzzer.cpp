// JPEG bytes through the decoder and the training transforms that follow it
// in the image-folder and Pascal VOC pipelines (odd sizes reach the crop and
// resize arithmetic).
#include <random>
#include <vector>

#include "fuzz_support.h"
#include "tbd/data/image_transforms.h"
#include "tbd/data/jpeg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tbd::fuzz::expect_value_or_error([&] {
    const auto image = tbd::decode_jpeg(std::vector<uint8_t>(data, data + size), "fuzz.jpg");
    // Decompression bombs are the decoder's to refuse; keep each run fast.
    if (static_cast<int64_t>(image.width) * image.height > 4096 * 4096) return;
    std::mt19937_64 rng(size);
    tbd::augment_for_training(image, 32, rng);
    tbd::resize_to_tanh_range(image, 16);
  });
  return 0;
}
