// Operator classes for the ops probe (docs/metrics.md#ops).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tbd {

// conv, gemm, rnn, attention, norm, elementwise, reduction, data movement,
// optimizer, communication, other. `in_optimizer_phase`: ops the optimizer's
// step runs are its work, whatever their name (SGD's add_ and mul_).
std::string op_class(std::string_view op, bool in_optimizer_phase = false);

// Every class, in the order reports list them.
const std::vector<std::string>& op_class_names();

}  // namespace tbd
