// Plain text for language modelling, as byte-level tokens: token = byte
// value (0–255), each file followed by an end-of-text token (GPT-2's
// <|endoftext|> separates documents the same way). --data names one file or
// a folder whose regular files (recursively, sorted, hidden ones skipped)
// are the documents.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"
#include "tbd/data/token_batch.h"

namespace tbd {

// Throws UsageError for a missing path or a folder without files, Error
// naming the file for an empty file and FILE:LINE for invalid UTF-8.
std::vector<int32_t> read_byte_tokens(const std::string& path, int32_t end_of_text);

// Endless batches of random windows of T+1 tokens (nanoGPT's sampling);
// window offsets of batch k come from a seed derived from k.
class TokenWindows {
 public:
  // Throws Error when the text is shorter than one window.
  TokenWindows(std::shared_ptr<const std::vector<int32_t>> tokens, int64_t batch_size, int64_t context, uint64_t seed,
               int workers, const std::string& source, Shard shard = {});
  TokenBatch next() { return prefetcher_.next(); }

 private:
  TokenBatch make(int64_t k) const;
  std::shared_ptr<const std::vector<int32_t>> tokens_;
  int64_t batch_size_, context_;
  uint64_t seed_;
  Prefetcher<TokenBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
