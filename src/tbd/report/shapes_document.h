// A tbd.shapes/1 document (`tbd shapes --out`) read into types for the
// report's layer-shapes section: per distinct layer shape its curve of
// training time against output channels, the cliffs and the
// performance-aware counts. check_shapes_document refuses a document whose
// fields break the schema's rules first (naming the file and the field).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/json_fields.h"

namespace tbd {

struct ShapesCurvePoint {
  int64_t channels = 0;
  double mean_s = 0, ci_low_s = 0, ci_high_s = 0;  // training (forward + backward) per call
  bool cliff = false;                              // slower than a larger count beyond both intervals
  bool aware = false;                              // on the performance-aware front
};

struct ShapesLayer {
  std::string name;   // the first module, "+N" for the others of the same shape
  std::string input;  // the geometry, described ("[8, 256, 14, 14] conv2d 3x3")
  int64_t original = 0;
  double share = 0;                     // of the step
  std::string worst_cliff;              // "232 channels take 1.90x the time of 256", or "no cliff"
  std::vector<ShapesCurvePoint> curve;  // ascending channels
};

struct ShapesDocument {
  std::string workload, file;
  double step_s = 0, ratio = 0, naive_step_s = 0, aware_step_s = 0;
  std::vector<ShapesLayer> layers;
};

std::span<const fields::FieldRule> shapes_rules();
// Throws Error naming `file` and the field.
void check_shapes_document(const nlohmann::json& doc, const std::string& file);
ShapesDocument read_shapes_document(const nlohmann::json& doc, const std::string& file);

}  // namespace tbd
