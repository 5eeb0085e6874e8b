// Where a workload's batches come from, behind one call: either a pool of
// synthetic batches made once at set-up and resident on the device (no input
// pipeline cost enters the measurement, docs/metrics.md), or a reader of the
// real data format whose host batches (prefetched by the reader's own
// workers) are converted and copied to the device as they are drawn.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "tbd/data/batch_pool.h"

namespace tbd {

class BatchSource {
 public:
  BatchSource() = default;
  explicit BatchSource(BatchPool synthetic) : pool_(std::move(synthetic)) {}
  // reader->next() gives a host batch; to_batch makes it a Batch on the device.
  // A reader that knows its distinct batch shapes (distinct_shapes()) declares them.
  template <class Reader, class ToBatch>
  BatchSource(std::shared_ptr<Reader> reader, ToBatch to_batch) {
    if constexpr (requires { reader->distinct_shapes(); }) declared_shapes_ = reader->distinct_shapes();
    read_ = [reader = std::move(reader), to_batch = std::move(to_batch)] { return to_batch(reader->next()); };
  }

  Batch next() { return read_ ? read_() : pool_.next(); }
  bool reads_dataset() const { return static_cast<bool>(read_); }
  // Workload::distinct_batch_shapes(): the pool's, or the reader's (0: not known).
  int64_t distinct_shapes() const { return read_ ? declared_shapes_ : pool_.distinct_shapes(); }

 private:
  BatchPool pool_;
  std::function<Batch()> read_;
  int64_t declared_shapes_ = 0;
};

// A source reading the dataset with a Reader made from `args`, each of its
// host batches put on `device` by the to_training_batch() overload of its type
// (declared beside the reader's batch type).
template <class Reader, class... Args>
BatchSource read_dataset(c10::Device device, Args&&... args) {
  return BatchSource(std::make_shared<Reader>(std::forward<Args>(args)...),
                     [device](const auto& host) { return to_training_batch(host, device); });
}

}  // namespace tbd
