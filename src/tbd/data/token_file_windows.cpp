#include "tbd/data/token_file_windows.h"

#include <utility>

#include "tbd/core/error.h"

namespace tbd {
namespace {

// Windows of T+1 tokens every T tokens: (N − 1) / T of them. Throws when
// there is not even one.
int64_t count_windows(const TokenStream& stream, int64_t context) {
  if (context < 1) throw Error("token windows need a context of at least one token");
  const int64_t n = stream.size();
  if (n < context + 1) {
    const TokenFile& last = stream.files().back();
    throw Error(last.path() + ": byte offset " + std::to_string(last.byte_offset(last.tokens())) +
                ": the data ends after " + std::to_string(n) + " tokens (" + stream.description() +
                "), fewer than one window of " + std::to_string(context + 1) +
                " (the context and the next token); give more data or a shorter context");
  }
  return (n - 1) / context;
}

}  // namespace

TokenFileWindows::TokenFileWindows(std::shared_ptr<const TokenStream> stream, int64_t batch_size, int64_t context,
                                   uint64_t seed, int workers, Shard shard)
    : stream_(std::move(stream)),
      batch_size_(batch_size),
      context_(context),
      windows_(count_windows(*stream_, context)),
      order_(windows_, seed),
      prefetcher_([this, shard](int64_t k) { return make(shard.global_batch(k)); }, workers, 2 * workers) {}

TokenBatch TokenFileWindows::make(int64_t k) {
  auto windows = torch::empty({batch_size_, context_ + 1}, torch::kInt64);
  auto* w = windows.data_ptr<int64_t>();
  for (int64_t r = 0; r < batch_size_; ++r)
    stream_->read(window_start(order_.item(k * batch_size_ + r)), context_ + 1, w + r * (context_ + 1));
  return {windows.narrow(1, 0, context_).contiguous(), windows.narrow(1, 1, context_).contiguous()};
}

}  // namespace tbd
