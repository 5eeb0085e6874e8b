// Batches of augmented images from an ImageFolder, made by the prefetching
// pipeline: batch b holds stream positions b·B … b·B+B−1 of an epoch shuffle,
// each decoded and prepared (augmented with a seed derived from its position,
// or resized whole for GANs).
// Distributed sampler: with `world` ranks sharing one seed, rank r takes the
// global batches b·world + r, so ranks read disjoint parts of each epoch.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/types.h>

#include "tbd/core/workload.h"
#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/image_folder.h"
#include "tbd/data/prefetcher.h"

namespace tbd {

struct ImageBatch {
  torch::Tensor images;  // [B, 3, size, size] float, normalised, on the CPU
  torch::Tensor labels;  // [B] int64
};

// A classification batch for training: images and labels moved to the
// device, counted in images.
Batch to_training_batch(const ImageBatch& b, c10::Device device);

// How a decoded image becomes a training tensor (image_transforms.h).
enum class ImagePreparation {
  imagenet_augmentation,  // random resized crop, flip, ImageNet normalisation
  resize_to_tanh_range,   // whole image resized, pixels in [-1, 1] (GAN training)
};

class ImageFolderBatches {
 public:
  ImageFolderBatches(std::shared_ptr<const ImageFolder> folder, int64_t batch_size, int image_size, uint64_t seed,
                     int workers, int rank = 0, int world = 1,
                     ImagePreparation preparation = ImagePreparation::imagenet_augmentation);
  ImageBatch next() { return prefetcher_.next(); }  // throws Error naming a bad file

 private:
  ImageBatch make(int64_t batch_index);
  std::shared_ptr<const ImageFolder> folder_;
  int64_t batch_size_;
  int image_size_;
  uint64_t seed_;
  int rank_, world_;
  ImagePreparation preparation_;
  EpochShuffle order_;
  Prefetcher<ImageBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
