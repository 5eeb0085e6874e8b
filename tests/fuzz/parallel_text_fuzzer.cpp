// Translation corpora (train.SRC / train.TGT, optional vocabularies) through
// the reader of seq2seq and the Transformer. The input holds the files split
// at NUL bytes: source text, target text, then optionally a vocabulary.
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "tbd/data/parallel_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string_view> parts;
  std::string_view rest = tbd::fuzz::as_text(data, size);
  while (parts.size() < 3) {
    const auto nul = rest.find('\0');
    parts.push_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  parts.resize(3);
  const auto dir = tbd::fuzz::scratch_dir() / "corpus";
  std::filesystem::remove_all(dir);
  tbd::fuzz::write_scratch("corpus/train.de", parts[0]);
  tbd::fuzz::write_scratch("corpus/train.en", parts[1]);
  const bool with_vocabulary = !parts[2].empty();
  if (with_vocabulary) tbd::fuzz::write_scratch("corpus/vocab.shared", parts[2]);
  tbd::fuzz::expect_value_or_error([&] {
    tbd::ParallelTextOptions options;
    options.shared_vocabulary = with_vocabulary || size % 2 == 1;
    options.max_vocabulary = size % 3 == 0 ? 0 : 16;
    options.max_length = 8;
    tbd::read_parallel_text(dir.string(), options);
  });
  return 0;
}
