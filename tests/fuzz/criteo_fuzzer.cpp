// Criteo TSV through DLRM's batch reader: the file front to back, across the
// end of an epoch (the reader starts over), in its pipeline thread.
#include <vector>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/criteo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("train.txt", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    const std::vector<int64_t> table_sizes(tbd::kCriteoSparse, 97);
    tbd::CriteoBatches batches(path, table_sizes, 3);
    for (int i = 0; i < 3; ++i) batches.next();
  });
  return 0;
}
