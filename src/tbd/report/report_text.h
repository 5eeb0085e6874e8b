// The "not available" reasons of the report's sections (one wording for
// Markdown and HTML; shown as "Not available: REASON."), and
// tbd's number formatting (core/number_format.h) they write with.
#pragma once

#include <string>

#include "tbd/core/number_format.h"

namespace tbd {

inline constexpr const char* kNoMachinesReason = "no result file";
inline constexpr const char* kNoAbReason = "no configuration is in both sets";
inline constexpr const char* kNoRunsReason = "no result files (only indexes)";
inline constexpr const char* kNoRunsButScalesReason = "no result files (only scaling files)";
inline constexpr const char* kNoFindingsReason = "no result carries the figures findings are computed from";
inline constexpr const char* kNoDispersionReason = "no result file with measured iterations";
inline constexpr const char* kNoGpuReason = "no run used a CUDA device (tbd run --device cuda; scripts/gpu-check)";
inline constexpr const char* kNoSweepReason =
    "no configuration was run at two or more batch sizes (tbd sweep W --batch-sizes 1,2,4 makes such runs)";
inline constexpr const char* kNoMemoryReason = "no run used the memory probe (--probes ...,memory)";
inline constexpr const char* kNoOpsReason = "no run used the ops probe (--probes ...,ops)";
inline constexpr const char* kNoLayersReason =
    "no run recorded per-layer time (the ops probe, --probes ...,ops, with a tbd whose models mark their layers)";
inline constexpr const char* kNoPhasesReason =
    "no result records phase times (CPU runs of this tbd record them; CUDA runs cannot: their phases are asynchronous)";
inline constexpr const char* kNoRooflineReason =
    "no run used the roofline probe with measured ceilings (tbd env --peak, then --probes ...,roofline)";
inline constexpr const char* kNoPredictionReason =
    "no tbd.prediction/1 file (tbd predict BASE.json --nproc 2 --check --out FILE makes one)";
inline constexpr const char* kNoScaleReason = "no tbd.scale/1 file (tbd scale W --nproc 1,2 --out FILE makes one)";

}  // namespace tbd
