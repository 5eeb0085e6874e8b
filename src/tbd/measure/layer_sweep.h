// Times one convolution or linear layer alone, at the input it has inside
// the model (LayerGeometry), for several output-channel counts: its forward,
// and its forward plus backward as training runs it (grad weight and bias,
// and grad input where the model computes it). The runner's discipline:
// warm-up calls first (oneDNN and cuDNN choose their kernels for a new
// shape there), then repetitions as the statistical unit, each a run of
// calls between two device synchronisations with nothing else in it; the
// counts take turns within each repetition (rotated from one repetition to
// the next), so a slow spell of the machine is shared among them rather
// than landing on one count. docs/analysis.md#tbd-shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <c10/core/Device.h>

#include "tbd/core/statistics.h"
#include "tbd/measure/ops/layer_geometry.h"

namespace tbd {

struct SweepTiming {
  int warmup = 2;  // calls of each count, forward and training, before any timing
  int repeat = 5;  // repetitions: the statistical unit
  int calls = 5;   // calls per repetition; a repetition's figure is their mean
};

struct ChannelTime {
  int64_t channels = 0;
  Summary forward;   // seconds per call over the repetitions
  Summary training;  // forward + backward, seconds per call
};

// Throws Error for a geometry it cannot rebuild (LayerGeometry::unsweepable_reason),
// or when the layer does not run (out of memory: the message names the count).
// `interrupted` is asked between repetitions; true stops the sweep (Error).
std::vector<ChannelTime> sweep_layer(const LayerGeometry& g, const std::vector<int64_t>& channels, c10::Device device,
                                     const SweepTiming& timing, const std::function<bool()>& interrupted = {});

}  // namespace tbd
