#include "tbd/data/image_folder_batches.h"

#include "tbd/data/batch_pool.h"

#include <random>

#include "tbd/core/rng.h"
#include "tbd/data/image_transforms.h"
#include "tbd/data/jpeg.h"

namespace tbd {

ImageFolderBatches::ImageFolderBatches(std::shared_ptr<const ImageFolder> folder, int64_t batch_size, int image_size,
                                       uint64_t seed, int workers, int rank, int world, ImagePreparation preparation)
    : folder_(std::move(folder)),
      batch_size_(batch_size),
      image_size_(image_size),
      seed_(seed),
      rank_(rank),
      world_(world),
      preparation_(preparation),
      order_(folder_->size(), seed),
      prefetcher_([this](int64_t b) { return make(b); }, workers, 2 * workers) {}

ImageBatch ImageFolderBatches::make(int64_t batch_index) {
  ImageBatch batch;
  batch.images = torch::empty({batch_size_, 3, image_size_, image_size_});
  batch.labels = torch::empty({batch_size_}, torch::kInt64);
  auto labels = batch.labels.accessor<int64_t, 1>();
  for (int64_t i = 0; i < batch_size_; ++i) {
    const int64_t global_batch = batch_index * world_ + rank_;
    const int64_t position = global_batch * batch_size_ + i;
    const int64_t item = order_.item(position);
    const std::string& path = folder_->path(item);
    const RgbImage image = decode_jpeg(read_file_bytes(path), path);
    if (preparation_ == ImagePreparation::resize_to_tanh_range) {
      batch.images[i].copy_(resize_to_tanh_range(image, image_size_));
    } else {
      std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(position)));
      batch.images[i].copy_(augment_for_training(image, image_size_, rng));
    }
    labels[i] = folder_->label(item);
  }
  return batch;
}

Batch to_training_batch(const ImageBatch& b, c10::Device device) {
  Batch batch;
  batch.inputs = {to_device(b.images, device)};
  batch.targets = {to_device(b.labels, device)};
  batch.samples = b.images.size(0);
  return batch;
}

}  // namespace tbd
