#include "tbd/data/voc_batches.h"

#include <random>

#include "tbd/core/rng.h"

namespace tbd {

LabelledImage to_labelled_image(const DetectionSample& sample) { return {sample.image, sample.boxes, sample.labels}; }

LabelledImage flip_horizontally(const LabelledImage& sample) {
  const auto width = static_cast<double>(sample.image.size(2));
  const auto& b = sample.boxes;
  const auto boxes = torch::stack({width - b.select(1, 2), b.select(1, 1), width - b.select(1, 0), b.select(1, 3)}, 1);
  return {sample.image.flip({2}), boxes, sample.labels};
}

VocBatches::VocBatches(std::shared_ptr<const PascalVoc> voc, int64_t batch_size, DetectionSizes sizes, uint64_t seed,
                       int workers, Shard shard)
    : voc_(std::move(voc)),
      batch_size_(batch_size),
      sizes_(sizes),
      seed_(seed),
      shard_(shard),
      order_(static_cast<int64_t>(voc_->size()), seed),
      prefetcher_([this](int64_t b) { return make(b); }, workers, 2 * workers) {}

Batch VocBatches::make(int64_t batch_index) {
  std::vector<LabelledImage> images;
  const int64_t global_batch = shard_.global_batch(batch_index);
  for (int64_t i = 0; i < batch_size_; ++i) {
    const int64_t position = global_batch * batch_size_ + i;
    LabelledImage image = to_labelled_image(voc_->read(static_cast<size_t>(order_.item(position))));
    std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(position)));
    if (std::bernoulli_distribution(0.5)(rng)) image = flip_horizontally(image);
    images.push_back(std::move(image));
  }
  return make_detection_batch(images, sizes_, torch::kCPU);
}

}  // namespace tbd
