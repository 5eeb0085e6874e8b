// Which named layer each operator belongs to, for the probes that observe
// every operator (ops, roofline): models mark their layers with
// nn::LayerScope (a USER_SCOPE "nn.Module: NAME"). A forward operator
// belongs to the innermost layer open on its thread; a backward operator to
// the layer of the forward operator whose autograd node it runs, matched by
// sequence number and forward thread, as PyTorch's profiler links them.
// Operators outside every layer (the loss, the optimizer, gradient
// accumulation, ...) belong to none.
#pragma once

#include <string>

#include <ATen/record_function.h>

namespace tbd {

// Operators outside every named layer: the loss, the optimizer, gradient accumulation, ...
inline constexpr const char* kNoLayer = "(no layer)";

// The name of an operator's layer (nullptr: none).
inline std::string layer_name(const std::string* layer) { return layer ? *layer : std::string(kNoLayer); }

struct LayerOfOp {
  const std::string* layer = nullptr;  // interned path, "outer.inner"; nullptr: no layer
  bool backward = false;               // the op runs an autograd node's backward
};

class LayerAttribution {
 public:
  // While any probe holds one, scope callbacks track the layers (refcounted).
  LayerAttribution();
  ~LayerAttribution();
  LayerAttribution(const LayerAttribution&) = delete;
  LayerAttribution& operator=(const LayerAttribution&) = delete;

  // From an operator's start callback (FUNCTION scope, on its own thread):
  // its layer; a forward op also records its layer for its autograd node.
  static LayerOfOp on_op_start(const at::RecordFunction& fn);
  // Forgets the forward ops' nodes (at the start of each iteration).
  static void clear_nodes();
};

}  // namespace tbd
