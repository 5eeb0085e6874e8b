// Arbitrary bytes as a token file, under two names: tokens.bin (an llm.c
// shard when the bytes start with a magic, else nanoGPT's raw uint16) and
// fuzz_train_000000.bin (llm.c's shard naming: an llm.c shard whatever the
// bytes, so a wrong magic is refused). Each is mapped, validated and cut
// into windows of a Llama 3-sized vocabulary: every uint16 id fits, a
// uint32 id may not.
#include <memory>
#include <string>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/token_file_windows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const std::string name : {"tokens.bin", "fuzz_train_000000.bin"}) {
    const auto path = tbd::fuzz::write_scratch(name, tbd::fuzz::as_text(data, size));
    tbd::fuzz::expect_value_or_error([&] {
      auto stream = std::make_shared<const tbd::TokenStream>(tbd::token_files(path), 128256);
      tbd::TokenFileWindows windows(stream, 2, 4, 1, 1);
      for (int k = 0; k < 3; ++k) windows.next();
    });
  }
  return 0;
}
