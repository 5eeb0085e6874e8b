// Raw text files through GPT's byte-level tokenizer and its window sampler.
#include <memory>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/byte_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("corpus.txt", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    tbd::TokenWindows windows(std::make_shared<const tbd::ByteText>(path, 256), 2, 4, 1, 1);
    windows.next();
  });
  return 0;
}
