// `tbd shapes W`: which output-channel counts each convolution and linear
// layer of a workload runs fast at (docs/analysis.md#tbd-shapes). One short run
// of the workload with the layers probe records each layer's input shape
// and share of the step; then each distinct layer shape is timed alone over
// the channel counts (layer_sweep.h) and analysed (channel_curve.h): the
// curve, its cliffs, the performance-aware counts, and the Amdahl estimate
// of the step if every layer were pruned to a ratio naively or to its best
// count. The document is tbd.shapes/1 (docs/schema).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/measure/layer_sweep.h"

namespace tbd {

class Workload;

struct ShapesRequest {
  RunOptions options;             // the workload's run (batch, precision, device, scale, --set ...)
  std::string layers;             // ECMAScript regex over module paths ("layer3\\..*conv2"); empty: every layer
  std::string channels = "auto";  // channel_counts()'s spec
  double ratio = 0.75;            // the pruning ratio of the estimate: keep at most this share of each layer's channels
  SweepTiming timing;
};

// Throws UsageError for a bad --layers or --channels (naming the fix), or a
// workload without named layers; Error when the run or the sweep fails.
// `progress` is told each distinct shape as it starts ("3/21 layer2.0.conv2 ...").
nlohmann::json run_shapes(const ShapesRequest& request, Workload& workload,
                          const std::function<void(const std::string&)>& progress = {});

// The terminal table of a tbd.shapes/1 document.
std::string shapes_table(const nlohmann::json& document);

}  // namespace tbd
