// Pascal VOC's layout (VOCdevkit/VOC2007 and friends): JPEGImages/<id>.jpg,
// Annotations/<id>.xml, ImageSets/Main/<split>.txt listing the ids. All
// annotations are parsed and checked when the dataset opens, so a bad file is
// reported before any training starts; images are decoded on demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

namespace tbd {

struct DetectionSample {
  torch::Tensor image;   // float32 [3,H,W], RGB in [0,1]
  torch::Tensor boxes;   // float32 [N,4]: x1,y1,x2,y2 in pixels, 0-based, x2/y2 exclusive
  torch::Tensor labels;  // int64 [N], 1..20 (0 is the background class)
  std::string id;        // image id from the split file
};

// One object of an annotation file, as parsed.
struct VocObject {
  int64_t label = 0;                     // 1..20
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;  // converted as in DetectionSample
  bool difficult = false;                // kept: VOC's "difficult" flag only matters for evaluation
};

struct VocAnnotation {
  std::string id;
  int width = 0, height = 0;  // from <size>; checked against the decoded JPEG
  std::vector<VocObject> objects;
};

// Parses one annotation file; throws Error naming the file and what is wrong
// (malformed XML, missing fields, unknown class, a box outside the image).
VocAnnotation parse_voc_annotation(const std::string& xml_path, const std::string& id);

class PascalVoc {
 public:
  // Throws UsageError when the layout is missing (naming what is expected)
  // and Error naming the file for a malformed annotation or a missing image.
  explicit PascalVoc(const std::string& root, const std::string& split = "trainval");

  size_t size() const { return annotations_.size(); }
  const VocAnnotation& annotation(size_t index) const { return annotations_.at(index); }
  // Thread-safe; throws Error naming the image file when it cannot be decoded.
  DetectionSample read(size_t index) const;

  static const std::vector<std::string>& class_names();  // 20 names; label = index + 1

 private:
  std::string root_;
  std::vector<VocAnnotation> annotations_;
};

}  // namespace tbd
