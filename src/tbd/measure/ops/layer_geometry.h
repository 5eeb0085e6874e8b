// One call of a convolution or linear layer as the model made it: the input
// shape, the weight's shape and the convolution's arguments, the dtype the
// operator computed in and the input's memory format. The layers probe
// records it from the operator stream; `tbd shapes` rebuilds the call from
// it with other output-channel counts (docs/analysis.md#tbd-shapes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace c10 {
enum class ScalarType : int8_t;
}

namespace tbd {

struct LayerGeometry {
  std::string kind;                                // "conv1d", "conv2d", "conv3d" or "linear"
  std::vector<int64_t> input;                      // the input's sizes (batch first)
  std::vector<int64_t> weight;                     // the parameter's sizes: [out, in/groups, k...] or [out, in]
  std::vector<int64_t> stride, padding, dilation;  // convolutions only
  int64_t groups = 1;
  bool transposed = false;
  bool bias = false;
  std::string dtype = "float32";     // what the operator computed in (bfloat16 under bf16 autocast)
  bool channels_last = false;        // the input was channels-last (NHWC) in memory
  bool input_requires_grad = false;  // the backward computes the input's gradient too (not for the stem)

  int64_t out_channels() const { return weight.empty() ? 0 : weight.front(); }
  // Why `tbd shapes` cannot vary this layer's output channels on their own;
  // empty when it can.
  std::string unsweepable_reason() const;
  // "[8, 64, 56, 56] conv2d 3x3 stride 1" for tables.
  std::string describe() const;
  // A key equal for two calls the sweep would time identically.
  std::string key() const;
};

// PyTorch's Python names ("float32", "bfloat16"), as results write dtypes;
// scalar_type_named throws Error for a name it does not know.
std::string dtype_name(c10::ScalarType type);
c10::ScalarType scalar_type_named(const std::string& name);

nlohmann::json to_json(const LayerGeometry& g);
// Throws Error naming the field when `j` is not a geometry this build reads.
LayerGeometry layer_geometry_from_json(const nlohmann::json& j);

}  // namespace tbd
