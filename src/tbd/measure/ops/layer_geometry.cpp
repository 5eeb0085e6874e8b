#include "tbd/measure/ops/layer_geometry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include "tbd/core/error.h"

namespace tbd {

std::string LayerGeometry::unsweepable_reason() const {
  if (transposed) return "a transposed convolution (its output channels are the weight's second dimension)";
  if (groups != 1)
    return "a grouped convolution (its output channels are tied to its " + std::to_string(groups) + " groups)";
  if (weight.size() < 2) return "no weight shape recorded";
  return "";
}

std::string LayerGeometry::describe() const {
  std::string text = fmt::format("[{}] {}", fmt::join(input, ", "), kind);
  if (kind != "linear" && weight.size() > 2) {
    std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
    text += fmt::format(" {}", fmt::join(kernel, "x"));
    if (!stride.empty() && stride.front() != 1) text += fmt::format(" stride {}", fmt::join(stride, "x"));
  }
  if (dtype != "float32") text += " " + dtype;
  return text;
}

namespace {

const std::pair<c10::ScalarType, const char*> kDtypeNames[] = {{c10::ScalarType::Float, "float32"},
                                                               {c10::ScalarType::BFloat16, "bfloat16"},
                                                               {c10::ScalarType::Half, "float16"},
                                                               {c10::ScalarType::Double, "float64"}};

}  // namespace

std::string dtype_name(c10::ScalarType type) {
  for (const auto& [t, name] : kDtypeNames)
    if (t == type) return name;
  return c10::toString(type);
}

c10::ScalarType scalar_type_named(const std::string& name) {
  for (const auto& [t, n] : kDtypeNames)
    if (name == n) return t;
  throw Error("a layer's dtype \"" + name + "\" is not one tbd times (float32, bfloat16, float16, float64)");
}

std::string LayerGeometry::key() const { return to_json(*this).dump(); }

nlohmann::json to_json(const LayerGeometry& g) {
  nlohmann::json j = {{"kind", g.kind},
                      {"input", g.input},
                      {"weight", g.weight},
                      {"bias", g.bias},
                      {"dtype", g.dtype},
                      {"channels_last", g.channels_last},
                      {"input_requires_grad", g.input_requires_grad}};
  if (g.kind != "linear") {
    j["stride"] = g.stride;
    j["padding"] = g.padding;
    j["dilation"] = g.dilation;
    j["groups"] = g.groups;
    j["transposed"] = g.transposed;
  }
  return j;
}

LayerGeometry layer_geometry_from_json(const nlohmann::json& j) {
  const auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(name)) throw Error(std::string("a layer's geometry lacks \"") + name + "\"");
    return j.at(name);
  };
  try {
    LayerGeometry g;
    g.kind = field("kind").get<std::string>();
    if (g.kind != "linear" && g.kind != "conv1d" && g.kind != "conv2d" && g.kind != "conv3d")
      throw Error("a layer's geometry has kind \"" + g.kind + "\"; known: linear, conv1d, conv2d, conv3d");
    g.input = field("input").get<std::vector<int64_t>>();
    g.weight = field("weight").get<std::vector<int64_t>>();
    g.bias = field("bias").get<bool>();
    g.dtype = field("dtype").get<std::string>();
    g.channels_last = field("channels_last").get<bool>();
    g.input_requires_grad = field("input_requires_grad").get<bool>();
    if (g.kind != "linear") {
      g.stride = field("stride").get<std::vector<int64_t>>();
      g.padding = field("padding").get<std::vector<int64_t>>();
      g.dilation = field("dilation").get<std::vector<int64_t>>();
      g.groups = field("groups").get<int64_t>();
      g.transposed = field("transposed").get<bool>();
    }
    return g;
  } catch (const nlohmann::json::exception&) {
    throw Error(
        "a layer's geometry has a field of the wrong type (the rules: docs/schema/tbd.result-1.schema.json, "
        "$defs.layer_geometry)");
  }
}

}  // namespace tbd
