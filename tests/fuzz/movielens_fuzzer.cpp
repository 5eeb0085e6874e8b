// MovieLens ratings.csv through NCF's reader and its negative sampler.
#include <memory>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/movielens.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("ratings.csv", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    auto ratings = std::make_shared<const tbd::MovieLensRatings>(path);
    // A user who rated every item leaves nothing to sample; the batches
    // must then refuse rather than spin.
    tbd::InteractionBatches batches(ratings, 8, 4, 1, 1);
    batches.next();
  });
  return 0;
}
