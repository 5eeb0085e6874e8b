#include "tbd/measure/ops/op_classes.h"

#include <initializer_list>

namespace tbd {
namespace {

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool any_of(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (auto p : parts)
    if (has(s, p)) return true;
  return false;
}
bool is_one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (s == n) return true;
  return false;
}

// "aten::_foo_" → "foo": namespace, private underscore and in-place suffix dropped.
std::string_view base_name(std::string_view op) {
  if (auto colons = op.rfind("::"); colons != std::string_view::npos) op.remove_prefix(colons + 2);
  while (!op.empty() && op.front() == '_') op.remove_prefix(1);
  while (!op.empty() && op.back() == '_') op.remove_suffix(1);
  return op;
}

}  // namespace

const std::vector<std::string>& op_class_names() {
  static const std::vector<std::string> names = {"conv",      "gemm",          "rnn",       "attention",
                                                 "norm",      "elementwise",   "reduction", "data movement",
                                                 "optimizer", "communication", "other"};
  return names;
}

// The name lists read as tables, one class per statement: kept as written.
// clang-format off
std::string op_class(std::string_view op, bool in_optimizer_phase) {
  if (op.substr(0, 5) == "c10d:" || any_of(op, {"allreduce", "all_reduce", "allgather", "all_gather",
                                                "reduce_scatter", "broadcast_", "nccl", "gloo"}))
    return "communication";
  if (in_optimizer_phase) return "optimizer";
  // The autograd engine's ranges around backward nodes are not ops.
  if (op.substr(0, 10) == "autograd::") return "other";
  const std::string_view n = base_name(op);
  if (any_of(n, {"foreach", "fused_adam", "fused_sgd", "fused_adagrad"})) return "optimizer";
  if (any_of(n, {"scaled_dot_product", "flash_attention", "efficient_attention", "multi_head_attention",
                 "cudnn_attention"}))
    return "attention";
  if (any_of(n, {"lstm", "gru", "rnn_tanh", "rnn_relu", "cudnn_rnn", "mkldnn_rnn", "thnn_fused"})) return "rnn";
  if (any_of(n, {"conv", "convolution"})) return "conv";
  if (is_one_of(n, {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "vdot",
                    "addbmm", "scaled_mm", "einsum", "tensordot", "mkldnn_linear", "linear_backward",
                    "addmm_activation"}))
    return "gemm";
  if (any_of(n, {"batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "batch_norm_impl"}))
    return "norm";
  if (any_of(n, {"sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "var", "std", "softmax",
                 "logsumexp", "cumsum", "cumprod", "nll_loss", "cross_entropy", "pool", "norm", "topk",
                 "sort", "ctc_loss", "mse_loss", "binary_cross_entropy", "max", "min", "all", "any"}) &&
      !any_of(n, {"maximum", "minimum", "clamp_max", "clamp_min"}))
    return "reduction";
  if (is_one_of(n, {"copy", "to", "to_copy", "contiguous", "clone", "cat", "stack", "index", "index_select",
                    "index_put", "index_add", "gather", "scatter", "scatter_add", "view", "reshape", "permute",
                    "transpose", "t", "expand", "expand_as", "narrow", "slice", "select", "as_strided",
                    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                    "full_like", "fill", "zero", "embedding", "embedding_bag", "embedding_dense_backward",
                    "embedding_bag_backward", "pad", "constant_pad_nd", "flatten", "unsqueeze", "squeeze",
                    "split", "split_with_sizes", "chunk", "unsafe_view", "detach", "resize", "set", "unbind",
                    "repeat", "roll", "flip", "masked_select", "nonzero", "where_self", "lift_fresh",
                    "reshape_alias", "alias", "slice_backward", "select_backward", "index_select_backward",
                    "unfold", "col2im", "im2col", "new_empty", "new_zeros", "new_empty_strided",
                    "copy_from", "local_scalar_dense", "item", "arange"}))
    return "data movement";
  if (any_of(n, {"add", "sub", "mul", "div", "relu", "threshold", "sigmoid", "tanh", "gelu", "silu",
                 "exp", "log", "pow", "sqrt", "rsqrt", "where", "clamp", "hardtanh", "dropout", "neg", "abs",
                 "lerp", "addcmul", "addcdiv", "masked_fill", "sign", "maximum", "minimum", "reciprocal", "erf", "sin", "cos", "floor", "ceil", "round", "elu", "mish",
                 "softplus", "leaky_relu", "hardswish", "hardsigmoid", "bitwise", "logical", "square",
                 "fmod", "remainder", "isnan", "isinf", "nan_to_num", "bernoulli", "uniform", "normal",
                 "random", "rand", "sgn", "trunc", "expm1", "log1p", "glu", "prelu"}))
    return "elementwise";
  if (is_one_of(n, {"eq", "ne", "lt", "gt", "le", "ge"})) return "elementwise";
  return "other";
}
// clang-format on

}  // namespace tbd
