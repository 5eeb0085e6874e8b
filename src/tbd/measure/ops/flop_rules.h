// FLOP rules per aten op, from input shapes (docs/metrics.md#flops). They
// follow PyTorch's torch.utils.flop_counter (FlopCounterMode) wherever it has
// a rule; fused RNN kernels and embedding bags have rules of our own.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <ATen/core/ivalue.h>
#include <c10/util/ArrayRef.h>

namespace tbd {

struct OpCost {
  double flops = 0;  // one multiply-add = 2 FLOPs
  double bytes = 0;  // only for ops counted by bytes (embedding bags), else 0
};

// True when `op` (a RecordFunction name such as "aten::convolution") has a
// rule. The flops probe counts only the outermost op with a rule on each
// thread, so conv2d → convolution → mkldnn_convolution and
// linear → addmm/matmul → mm count once.
bool has_flop_rule(std::string_view op);

// The cost of one call, from its (boxed) inputs. Ops without a rule, and
// calls whose inputs do not have the expected shapes, cost nothing.
OpCost flop_cost(std::string_view op, c10::ArrayRef<c10::IValue> inputs);

}  // namespace tbd
