#include "tbd/data/pascal_voc.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tbd/core/error.h"
#include "tbd/data/dataset_paths.h"
#include "tbd/data/jpeg.h"

namespace tbd {
namespace fs = std::filesystem;

const std::vector<std::string>& PascalVoc::class_names() {
  static const std::vector<std::string> names = {
      "aeroplane",   "bicycle", "bird",  "boat",      "bottle", "bus",         "car",   "cat",  "chair", "cow",
      "diningtable", "dog",     "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"};
  return names;
}

namespace {

constexpr double kMaxJpegSide = 65535;  // JPEG stores each side in 16 bits

std::string trimmed(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// A required numeric child; VOC writes integers, a few files write decimals.
double number(const pugi::xml_node& parent, const char* name, const std::string& where) {
  const pugi::xml_node child = parent.child(name);
  const std::string text = trimmed(child.text().as_string());
  if (!child || text.empty()) throw Error(where + ": missing <" + std::string(name) + ">");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(value))
    throw Error(where + ": <" + std::string(name) + "> is '" + text + "', not a number");
  return value;
}

}  // namespace

VocAnnotation parse_voc_annotation(const std::string& xml_path, const std::string& id) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_file(xml_path.c_str());
  if (!parsed)
    throw Error(xml_path + ": malformed XML (" + parsed.description() + " at byte " + std::to_string(parsed.offset) +
                "); fix or regenerate the annotation file");
  const pugi::xml_node root = doc.child("annotation");
  if (!root) throw Error(xml_path + ": no <annotation> element; not a Pascal VOC annotation file");

  VocAnnotation a;
  a.id = id;
  const pugi::xml_node size = root.child("size");
  if (!size) throw Error(xml_path + ": missing <size> (width and height of the image)");
  // Checked as read, before the conversion to int (a huge value would not fit).
  const double width = number(size, "width", xml_path + " <size>");
  const double height = number(size, "height", xml_path + " <size>");
  if (!(width >= 1 && width <= kMaxJpegSide && height >= 1 && height <= kMaxJpegSide))
    throw Error(xml_path + ": <size> is " + fmt::format("{}x{}", width, height) +
                "; width and height must be in [1, 65535] pixels, as in a JPEG image");
  a.width = static_cast<int>(width);
  a.height = static_cast<int>(height);

  const auto& names = PascalVoc::class_names();
  int index = 0;
  for (const pugi::xml_node object : root.children("object")) {
    ++index;
    const std::string where = xml_path + " object " + std::to_string(index);
    const std::string name = trimmed(object.child("name").text().as_string());
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw Error(where + ": unknown class name '" + name +
                  "'; Pascal VOC has aeroplane, bicycle, ..., tvmonitor (20 classes)");
    const pugi::xml_node box = object.child("bndbox");
    if (!box) throw Error(where + ": missing <bndbox>");
    const double xmin = number(box, "xmin", where), ymin = number(box, "ymin", where);
    const double xmax = number(box, "xmax", where), ymax = number(box, "ymax", where);
    // VOC coordinates are 1-based and inclusive: 1 <= xmin <= xmax <= width.
    if (xmin < 1 || ymin < 1 || xmax > a.width || ymax > a.height || xmin > xmax || ymin > ymax)
      throw Error(where + ": box (" + std::to_string(xmin) + "," + std::to_string(ymin) + ")-(" + std::to_string(xmax) +
                  "," + std::to_string(ymax) + ") lies outside the " + std::to_string(a.width) + "x" +
                  std::to_string(a.height) +
                  " image or is inverted; VOC boxes are 1-based with 1 <= min <= max <= size");
    VocObject o;
    o.label = (it - names.begin()) + 1;
    o.x1 = static_cast<float>(xmin - 1);  // 1-based inclusive → 0-based, exclusive end
    o.y1 = static_cast<float>(ymin - 1);
    o.x2 = static_cast<float>(xmax);
    o.y2 = static_cast<float>(ymax);
    o.difficult = object.child("difficult").text().as_int(0) != 0;
    a.objects.push_back(o);
  }
  if (a.objects.empty())
    throw Error(xml_path +
                ": no <object>; every training image needs at least one box "
                "(remove the id from the split file)");
  return a;
}

PascalVoc::PascalVoc(const std::string& root, const std::string& split) : root_(root) {
  const std::string layout = "expected ROOT/JPEGImages/, ROOT/Annotations/*.xml and ROOT/ImageSets/Main/" + split +
                             ".txt (e.g. VOCdevkit/VOC2007)";
  if (path_kind(root) != PathKind::directory) throw UsageError("--data " + root + ": no such folder; " + layout);
  for (const char* sub : {"JPEGImages", "Annotations"})
    if (path_kind(fs::path(root) / sub) != PathKind::directory)
      throw UsageError("--data " + root + ": no " + sub + "/ folder; " + layout);
  const fs::path split_file = fs::path(root) / "ImageSets" / "Main" / (split + ".txt");
  std::ifstream in(split_file);
  if (!in) throw UsageError("--data " + root + ": cannot read " + split_file.string() + "; " + layout);

  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string id = trimmed(line);
    if (id.empty()) continue;
    if (id.find_first_of(" \t/") != std::string::npos)
      throw Error(split_file.string() + ":" + std::to_string(line_number) + ": '" + id +
                  "' is not an image id (one id per line, no paths or flags)");
    const fs::path image = fs::path(root) / "JPEGImages" / (id + ".jpg");
    if (path_kind(image) != PathKind::regular)
      throw Error(split_file.string() + ":" + std::to_string(line_number) + ": image " + image.string() +
                  " is missing; restore it or remove the id from the split file");
    const fs::path xml = fs::path(root) / "Annotations" / (id + ".xml");
    if (path_kind(xml) != PathKind::regular)
      throw Error(split_file.string() + ":" + std::to_string(line_number) + ": annotation " + xml.string() +
                  " is missing; restore it or remove the id from the split file");
    annotations_.push_back(parse_voc_annotation(xml.string(), id));
  }
  if (annotations_.empty()) throw UsageError("--data " + root + ": " + split_file.string() + " lists no images");
}

DetectionSample PascalVoc::read(size_t index) const {
  const VocAnnotation& a = annotations_.at(index);
  const std::string path = (fs::path(root_) / "JPEGImages" / (a.id + ".jpg")).string();
  const RgbImage rgb = decode_jpeg(read_file_bytes(path), path);
  if (rgb.width != a.width || rgb.height != a.height)
    throw Error(path + ": the image is " + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                " but its annotation says " + std::to_string(a.width) + "x" + std::to_string(a.height) +
                "; the boxes would be wrong, fix the annotation");
  DetectionSample s;
  s.id = a.id;
  s.image = torch::from_blob(const_cast<uint8_t*>(rgb.pixels.data()), {rgb.height, rgb.width, 3}, torch::kUInt8)
                .permute({2, 0, 1})
                .to(torch::kFloat32)
                .div_(255.0);
  const auto n = static_cast<int64_t>(a.objects.size());
  s.boxes = torch::empty({n, 4}, torch::kFloat32);
  s.labels = torch::empty({n}, torch::kInt64);
  auto boxes = s.boxes.accessor<float, 2>();
  auto labels = s.labels.accessor<int64_t, 1>();
  for (int64_t i = 0; i < n; ++i) {
    const VocObject& o = a.objects[static_cast<size_t>(i)];
    boxes[i][0] = o.x1;
    boxes[i][1] = o.y1;
    boxes[i][2] = o.x2;
    boxes[i][3] = o.y2;
    labels[i] = o.label;
  }
  return s;
}

}  // namespace tbd
