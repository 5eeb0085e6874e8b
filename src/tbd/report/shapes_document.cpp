#include "tbd/report/shapes_document.h"

#include <fmt/format.h>

#include <algorithm>

#include "tbd/core/error.h"
#include "tbd/measure/ops/layer_geometry.h"

namespace tbd {

namespace {

using namespace fields::rules;

constexpr fields::FieldRule kShapesRules[] = {
    {"workload", required(object)},
    {"workload.name", required(string)},
    {"step", required(object)},
    {"step.mean_s", required(positive)},
    {"layers", required(array)},
    {"layers[]", object},
    {"layers[].modules", required(array)},
    {"layers[].modules[]", string},
    {"layers[].geometry", required(object)},
    {"layers[].geometry.kind", required(string)},
    {"layers[].geometry.input", required(array)},
    {"layers[].geometry.input[]", count},
    {"layers[].geometry.weight", required(array)},
    {"layers[].geometry.weight[]", positive_integer},
    {"layers[].geometry.bias", required(boolean)},
    {"layers[].geometry.dtype", required(string)},
    {"layers[].geometry.channels_last", required(boolean)},
    {"layers[].geometry.input_requires_grad", required(boolean)},
    {"layers[].geometry.stride", array},
    {"layers[].geometry.stride[]", count},
    {"layers[].geometry.padding", array},
    {"layers[].geometry.padding[]", count},
    {"layers[].geometry.dilation", array},
    {"layers[].geometry.dilation[]", count},
    {"layers[].geometry.groups", positive_integer},
    {"layers[].geometry.transposed", boolean},
    {"layers[].original_channels", required(positive_integer)},
    {"layers[].share_of_step", required(non_negative)},
    {"layers[].curve", required(array)},
    {"layers[].curve[]", object},
    {"layers[].curve[].channels", required(positive_integer)},
    {"layers[].curve[].training", required(object)},
    {"layers[].curve[].training.mean_s", required(non_negative)},
    {"layers[].curve[].training.ci95_mean_s", required(array)},
    {"layers[].curve[].training.ci95_mean_s[]", number},
    {"layers[].cliffs", required(array)},
    {"layers[].cliffs[]", object},
    {"layers[].cliffs[].channels", required(positive_integer)},
    {"layers[].cliffs[].faster_channels", required(positive_integer)},
    {"layers[].cliffs[].ratio", required(positive)},
    {"layers[].front", required(array)},
    {"layers[].front[]", positive_integer},
    {"prediction", required(object)},
    {"prediction.ratio", required(positive)},
    {"prediction.step_s", required(positive)},
    {"prediction.naive_step_s", required(number)},
    {"prediction.aware_step_s", required(number)},
};

}  // namespace

std::span<const fields::FieldRule> shapes_rules() { return kShapesRules; }

void check_shapes_document(const nlohmann::json& doc, const std::string& file) {
  fields::check_fields(doc, kShapesRules, file);
  for (size_t i = 0; i < doc["layers"].size(); ++i) {
    const auto& l = doc["layers"][i];
    const std::string at = file + ": field 'layers[" + std::to_string(i) + "].";
    if (l["modules"].empty()) throw Error(at + "modules' is empty; a layer shape names at least one module");
    if (l["curve"].empty()) throw Error(at + "curve' is empty; a swept layer has at least its original count");
    for (const auto& p : l["curve"])
      if (p["training"]["ci95_mean_s"].size() != 2)
        throw Error(at + "curve[].training.ci95_mean_s' must hold two numbers (the interval's ends)");
    try {
      (void)layer_geometry_from_json(l["geometry"]);
    } catch (const Error& e) {
      throw Error(at + "geometry': " + e.what());
    }
  }
}

ShapesDocument read_shapes_document(const nlohmann::json& doc, const std::string& file) {
  ShapesDocument d;
  d.file = file;
  d.workload = doc["workload"]["name"].get<std::string>();
  d.step_s = doc["step"]["mean_s"].get<double>();
  d.ratio = doc["prediction"]["ratio"].get<double>();
  d.naive_step_s = doc["prediction"]["naive_step_s"].get<double>();
  d.aware_step_s = doc["prediction"]["aware_step_s"].get<double>();
  for (const auto& l : doc["layers"]) {
    ShapesLayer layer;
    const auto& modules = l["modules"];
    layer.name = modules[0].get<std::string>() + (modules.size() > 1 ? fmt::format(" +{}", modules.size() - 1) : "");
    layer.input = layer_geometry_from_json(l["geometry"]).describe();
    layer.original = l["original_channels"].get<int64_t>();
    layer.share = l["share_of_step"].get<double>();
    const auto front = l["front"].get<std::vector<int64_t>>();
    std::vector<int64_t> cliffs;
    double worst = 0;
    layer.worst_cliff = "no cliff";
    for (const auto& c : l["cliffs"]) {
      cliffs.push_back(c["channels"].get<int64_t>());
      if (c["ratio"].get<double>() > worst) {
        worst = c["ratio"].get<double>();
        layer.worst_cliff = fmt::format("{} channels take {:.2f}x the time of {}", c["channels"].get<int64_t>(), worst,
                                        c["faster_channels"].get<int64_t>());
      }
    }
    for (const auto& p : l["curve"]) {
      ShapesCurvePoint point;
      point.channels = p["channels"].get<int64_t>();
      point.mean_s = p["training"]["mean_s"].get<double>();
      point.ci_low_s = p["training"]["ci95_mean_s"][0].get<double>();
      point.ci_high_s = p["training"]["ci95_mean_s"][1].get<double>();
      point.cliff = std::find(cliffs.begin(), cliffs.end(), point.channels) != cliffs.end();
      point.aware = std::find(front.begin(), front.end(), point.channels) != front.end();
      layer.curve.push_back(point);
    }
    std::sort(layer.curve.begin(), layer.curve.end(),
              [](const auto& a, const auto& b) { return a.channels < b.channels; });
    d.layers.push_back(std::move(layer));
  }
  return d;
}

}  // namespace tbd
