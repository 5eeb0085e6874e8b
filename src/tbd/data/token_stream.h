// Token files read as one stream of token ids, in the order given (a folder:
// its token files sorted by name), each id checked against the model's
// vocabulary as it is read. Documents are already separated inside the files
// by the tokenizer's end-of-text id (llm.c and nanoGPT write one between
// documents), so the stream is used as it is: nothing is inserted at file
// boundaries either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tbd/data/token_file.h"

namespace tbd {

// Whether a --data path names token files rather than text: a token file
// (is_token_file), or a folder holding a `.bin` file at its top level.
bool is_token_data(const std::string& path);

// The token files a --data path names, in stream order: the file itself, or
// a folder's `.bin` files (top level, hidden ones skipped, sorted by name);
// of those only the ones whose name holds "train" when any does (llm.c's
// *_train_*.bin beside *_val_*.bin, nanoGPT's train.bin beside val.bin).
// Throws UsageError for a missing path or a folder without `.bin` files.
std::vector<std::string> token_files(const std::string& path);

class TokenStream {
 public:
  // Maps and validates every file (TokenFile's errors). When any file is an
  // llm.c shard, all must be, and of one version (one tokenizer). Throws
  // Error for an empty list or a mix of formats.
  TokenStream(const std::vector<std::string>& files, int64_t vocabulary);

  int64_t size() const { return size_; }  // tokens in all files
  int64_t vocabulary() const { return vocabulary_; }
  TokenFormat format() const { return files_.front().format(); }
  const std::vector<TokenFile>& files() const { return files_; }

  // Writes tokens [start, start + n) of the stream to `out`. Throws Error
  // naming the file and the byte offset of an id >= vocabulary. Ids are
  // checked here, as windows are read, not once at open: reading every
  // token of a multi-gigabyte set before the first step would cost minutes
  // and page in the whole set, while the check costs one comparison per
  // token already being copied.
  void read(int64_t start, int64_t n, int64_t* out) const;

  // "llm.c shard (version 1, uint16 tokens), 2 files, 1000000 tokens".
  std::string description() const;

 private:
  std::vector<TokenFile> files_;
  std::vector<int64_t> starts_;  // stream index of each file's first token
  int64_t size_ = 0;
  int64_t vocabulary_;
};

}  // namespace tbd
