// Marks a model's named layer in the operator stream, so the ops and
// roofline probes can attribute time, FLOPs and bytes per layer and traces
// show the layers: a USER_SCOPE RecordFunction named "nn.Module: NAME", the
// name PyTorch's profiler gives module events. Scopes nest: a layer inside
// another is "outer.inner". With no observer (the timed windows) it costs
// one thread-local check, as every ATen op's own RecordFunction does.
#pragma once

#include <string>

#include <ATen/record_function.h>

namespace tbd::nn {

inline constexpr const char* kLayerScopePrefix = "nn.Module: ";

class LayerScope {
 public:
  explicit LayerScope(const char* name) : guard_(at::RecordScope::USER_SCOPE) {
    if (guard_.isActive()) guard_.before(std::string(kLayerScopePrefix) + name);
  }
  LayerScope(const LayerScope&) = delete;
  LayerScope& operator=(const LayerScope&) = delete;

 private:
  at::RecordFunction guard_;
};

}  // namespace tbd::nn
