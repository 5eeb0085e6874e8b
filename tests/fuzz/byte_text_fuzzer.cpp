// Raw text files through GPT's byte-level tokenizer and its window sampler.
#include <memory>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/byte_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("corpus.txt", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    auto tokens = std::make_shared<const std::vector<int32_t>>(tbd::read_byte_tokens(path, 256));
    tbd::TokenWindows windows(tokens, 2, 4, 1, 1, path);
    windows.next();
  });
  return 0;
}
