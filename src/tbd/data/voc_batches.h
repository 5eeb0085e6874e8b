// Training batches from a Pascal VOC folder, made by the prefetching
// pipeline: batch b holds stream positions b·B … b·B+B−1 of an epoch
// shuffle that every rank shares; rank r reads the global batches
// r, r+W, … (shard.h). Each image is decoded, flipped horizontally with
// probability 0.5 (torchvision's detection training transform; seeded by
// its stream position), resized, normalised and the batch padded
// (detection_batch.h) on a worker thread. Batches stay on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tbd/data/detection_batch.h"
#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/pascal_voc.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"

namespace tbd {

class VocBatches {
 public:
  VocBatches(std::shared_ptr<const PascalVoc> voc, int64_t batch_size, DetectionSizes sizes, uint64_t seed, int workers,
             Shard shard);
  Batch next() { return prefetcher_.next(); }  // throws Error naming a bad file

 private:
  Batch make(int64_t batch_index);
  std::shared_ptr<const PascalVoc> voc_;
  int64_t batch_size_;
  DetectionSizes sizes_;
  uint64_t seed_;
  Shard shard_;
  EpochShuffle order_;
  Prefetcher<Batch> prefetcher_;  // last: its threads use the members above
};

LabelledImage to_labelled_image(const DetectionSample& sample);

// The image mirrored left–right, boxes with it.
LabelledImage flip_horizontally(const LabelledImage& sample);

}  // namespace tbd
