// Synthetic detection images of Pascal VOC's shapes: VOC-sized pictures
// (500×375 landscape or 375×500 portrait at full scale) holding one to five
// objects (VOC averages about 2.4), each a box of 10–80 % of the image side
// filled with its class's colour over a noisy background, labels uniform
// over the 20 classes. Boxes lie inside the image, so the network has
// something real to learn.
#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>

#include "tbd/data/detection_batch.h"

namespace tbd {

// `long_side` × 3/4 pictures, orientation at random; classes includes background.
LabelledImage synthetic_detection_image(at::Generator& generator, int64_t long_side, int64_t classes);

}  // namespace tbd
