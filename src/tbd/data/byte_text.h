// Plain text for language modelling, as byte-level tokens: token = byte
// value (0–255), each file followed by an end-of-text token (GPT-2's
// <|endoftext|> separates documents the same way). --data names one file or
// a folder whose regular files (recursively, sorted, hidden ones skipped)
// are the documents.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <torch/types.h>

#include "tbd/data/mapped_file.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"
#include "tbd/data/token_batch.h"

namespace tbd {

// The documents' bytes as one token stream. A file of 1 MiB or more is mapped
// (mapped_file.h), not read: a token is a byte, so a text of gigabytes costs
// page cache, shared and reclaimable, instead of four bytes of private memory
// per byte. Smaller files are copied, one after another, into one buffer: a
// folder of many small documents would otherwise take one mapping each, and
// Linux allows a process about 65,000.
class ByteText {
 public:
  // Throws UsageError for a missing path or a folder without files, Error
  // naming the file for an empty file and FILE:LINE for invalid UTF-8 (every
  // file is checked once here: one pass over the bytes, at the speed of the
  // page cache or the disk).
  ByteText(const std::string& path, int32_t end_of_text);

  int64_t size() const { return size_; }  // bytes of all files + one end-of-text per file
  const std::string& path() const { return path_; }

  // Writes tokens [start, start + n) of the stream to `out`; the range must
  // lie inside the stream.
  void read(int64_t start, int64_t n, int64_t* out) const;

 private:
  std::string path_;
  int32_t end_of_text_;
  std::vector<MappedFile> mapped_;           // the large files
  std::string copied_;                       // the small files' bytes
  std::vector<std::string_view> documents_;  // each file's bytes, in stream order
  std::vector<int64_t> starts_;              // stream index of each file's first token
  int64_t size_ = 0;
};

// Endless batches of random windows of T+1 tokens (nanoGPT's sampling);
// window offsets of batch k come from a seed derived from k.
class TokenWindows {
 public:
  // Throws Error naming the text when it is shorter than one window.
  TokenWindows(std::shared_ptr<const ByteText> text, int64_t batch_size, int64_t context, uint64_t seed, int workers,
               Shard shard = {});
  TokenBatch next() { return prefetcher_.next(); }

 private:
  TokenBatch make(int64_t k) const;
  std::shared_ptr<const ByteText> text_;
  int64_t batch_size_, context_;
  uint64_t seed_;
  Prefetcher<TokenBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
