// Training-time image augmentation as torchvision does it for ImageNet:
// RandomResizedCrop(size, scale 0.08–1, ratio 3/4–4/3), horizontal flip with
// probability 0.5, then per-channel normalisation with the ImageNet statistics.
// And the preparation of GAN training images: the whole image downsampled.
#pragma once

#include <random>

#include <torch/types.h>

#include "tbd/data/jpeg.h"

namespace tbd {

struct CropBox {
  int top = 0, left = 0, height = 0, width = 0;
};

// torchvision's RandomResizedCrop.get_params: ten tries, then a centre crop.
CropBox random_resized_crop_box(int height, int width, std::mt19937_64& rng);

// Returns a float tensor [3, size, size], normalised.
torch::Tensor augment_for_training(const RgbImage& image, int size, std::mt19937_64& rng);

// The whole image resized (antialiased, aspect not kept) to size × size,
// pixels mapped from 0…255 to [-1, 1] to match a tanh generator (WGAN-GP's
// gan_64x64.py: 2·(x/255 − 0.5)). Returns a float tensor [3, size, size].
torch::Tensor resize_to_tanh_range(const RgbImage& image, int size);

}  // namespace tbd
