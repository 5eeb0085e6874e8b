// Training windows from token files (llm.c shards, nanoGPT .bin): the stream
// is cut into windows of context + 1 tokens starting every `context` tokens
// (llm.c's loader: window w holds tokens [w·T, w·T + T]; inputs are its
// first T, targets the T after the first), packed across documents and
// files. Every epoch visits all windows once in a seeded shuffle
// (EpochShuffle); global batch k holds stream positions k·B ... k·B + B − 1,
// and rank r of W reads global batches r, r + W, ... (shard.h), so within an
// epoch no two ranks, and no two batches, share a window. Workload-neutral:
// gpt reads GPT-2 shards with it, llama Llama 3's.
#pragma once

#include <cstdint>
#include <memory>

#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"
#include "tbd/data/token_batch.h"
#include "tbd/data/token_stream.h"

namespace tbd {

class TokenFileWindows {
 public:
  // Throws Error naming the last file and where it ends when the stream is
  // shorter than one window of context + 1 tokens. A token id outside the
  // stream's vocabulary ends the run (Error from next(), naming the file and
  // the byte offset) when the first window holding it is read.
  TokenFileWindows(std::shared_ptr<const TokenStream> stream, int64_t batch_size, int64_t context, uint64_t seed,
                   int workers, Shard shard = {});
  TokenBatch next() { return prefetcher_.next(); }

  int64_t windows() const { return windows_; }
  // Where window w starts in the stream (its first input token).
  int64_t window_start(int64_t w) const { return w * context_; }

 private:
  TokenBatch make(int64_t k);
  std::shared_ptr<const TokenStream> stream_;
  int64_t batch_size_, context_, windows_;
  EpochShuffle order_;
  Prefetcher<TokenBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
