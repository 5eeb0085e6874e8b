// The analysis of one layer's time against its output-channel count (`tbd
// shapes`, docs/analysis.md#tbd-shapes): which counts to time, the cliffs (a
// count slower than a larger one beyond both confidence intervals), the
// performance-aware counts (the Pareto front: no larger count is faster),
// the count a pruning ratio allows, and the Amdahl estimate of the step.
// Pure functions of the measured curve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbd {

// The counts to time for a layer of `original` output channels. `spec`:
//  - "auto": every multiple of 8 from 50% to 100% of the original, and every
//    count from original-7 to the original;
//  - "LO:HI:STEP": LO, LO+STEP, ... up to HI; LO and HI are counts or
//    percentages of the original ("50%:100%:8");
//  - "A,B,C": those counts.
// The original is always included; the list is sorted, without repeats.
// Throws UsageError naming the problem for a spec it cannot read, a count
// below 1 or above 16 times the original (or 65,536).
std::vector<int64_t> channel_counts(const std::string& spec, int64_t original);

struct CurvePoint {
  int64_t channels = 0;
  double mean = 0, ci_low = 0, ci_high = 0;  // seconds; the 95% interval of the mean
};

// A count slower than a larger count beyond both 95% intervals: the larger
// count with the lowest mean among those that beat it that way.
struct Cliff {
  int64_t channels = 0;
  int64_t faster_channels = 0;
  double ratio = 0;  // mean(channels) / mean(faster_channels), > 1
};

// `curve` in any order; cliffs by channels ascending. A count whose
// interval overlaps every larger count's is no cliff, however its mean sits.
std::vector<Cliff> find_cliffs(std::vector<CurvePoint> curve);

// The performance-aware counts: those with a mean below every larger
// count's mean (the Pareto front of time against channels), ascending. The
// largest count is always on it.
std::vector<int64_t> performance_front(std::vector<CurvePoint> curve);

// The largest count of `curve` at or below `bound` (the naive pruning
// choice), and the largest performance-aware one (none when no count is:
// `tbd shapes` then takes the naive one).
std::optional<CurvePoint> largest_at_most(const std::vector<CurvePoint>& curve, int64_t bound);
std::optional<CurvePoint> best_at_most(const std::vector<CurvePoint>& curve, int64_t bound);

// The Amdahl estimate of a step of `step_s` seconds when each layer, which
// takes `share` of the step at its original width, runs `time_ratio` of its
// original time: step · (1 − Σ share · (1 − time_ratio)). The rest of the
// step, and the layers that read a pruned layer's output, are taken as
// unchanged.
struct LayerChange {
  double share = 0;
  double time_ratio = 1;
};
double amdahl_step(double step_s, const std::vector<LayerChange>& changes);

}  // namespace tbd
