// Arbitrary bytes as a token file (llm.c shard when they start with a magic,
// else nanoGPT's raw uint16, by the name tokens.bin), mapped, validated and
// cut into windows of a Llama 3-sized vocabulary: every uint16 id fits, a
// uint32 id may not.
#include <memory>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/token_file_windows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("tokens.bin", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    auto stream = std::make_shared<const tbd::TokenStream>(tbd::token_files(path), 128256);
    tbd::TokenFileWindows windows(stream, 2, 4, 1, 1);
    for (int k = 0; k < 3; ++k) windows.next();
  });
  return 0;
}
