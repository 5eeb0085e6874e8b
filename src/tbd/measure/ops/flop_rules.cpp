#include "tbd/measure/ops/flop_rules.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace tbd {
namespace {

using Inputs = c10::ArrayRef<c10::IValue>;
using Shape = std::vector<int64_t>;

// Shape of a tensor argument; empty when the argument is not a defined tensor.
Shape shape(Inputs in, size_t i) {
  if (i >= in.size() || !in[i].isTensor()) return {};
  const auto& t = in[i].toTensor();
  if (!t.defined()) return {};
  return t.sizes().vec();
}

// Product of s[from, to), the range clamped to the shape.
double product(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  const size_t end = std::min(to, s.size());
  double p = 1;
  for (size_t i = from; i < end; ++i) p *= static_cast<double>(s.at(i));
  return p;
}

std::vector<int64_t> ints(Inputs in, size_t i) {
  if (i < in.size() && in[i].isIntList()) return in[i].toIntVector();
  if (i < in.size() && in[i].isInt()) return {in[i].toInt()};
  return {};
}

bool flag(Inputs in, size_t i) { return i < in.size() && in[i].isBool() && in[i].toBool(); }

bool mask_bit(Inputs in, size_t i, size_t bit) {
  if (i >= in.size() || !in[i].isBoolList()) return true;  // unknown: assume computed
  const auto list = in[i].toBoolList();
  return bit < list.size() && list.get(bit);
}

int64_t at_or(const std::vector<int64_t>& v, size_t i, int64_t fallback) {
  if (v.empty()) return fallback;
  return i < v.size() ? v[i] : v.back();  // a single value applies to every dimension
}

// FlopCounterMode's conv_flop_count: 2 · N · C_out · (C_in/groups) · ∏kernel ·
// ∏spatial, where spatial is the output size (the input size when transposed,
// because then the weight maps input positions to output windows).
double conv_flops(const Shape& x, const Shape& w, const Shape& spatial) {
  if (w.size() < 3 || x.empty()) return 0;
  const size_t dims = w.size() - 2;
  const double batch = x.size() == w.size() ? static_cast<double>(x[0]) : 1.0;  // unbatched input
  return 2.0 * batch * static_cast<double>(w[0]) * static_cast<double>(w[1]) * product(w, 2) *
         product(spatial, spatial.size() - std::min(spatial.size(), dims));
}

// Forward convolution in any of its spellings. Argument positions:
// convolution/_convolution: input, weight, bias, stride, padding, dilation, transposed, ...
// conv1d/2d/3d: input, weight, bias, stride, padding (ints or "same"/"valid"), dilation, groups
// conv_transpose1d/2d/3d: input, weight, bias, stride, padding, output_padding, groups, dilation
double convolution(Inputs in, bool generic, bool transposed_op) {
  const Shape x = shape(in, 0), w = shape(in, 1);
  if (x.empty() || w.size() < 3) return 0;
  const bool transposed = transposed_op || (generic && flag(in, 6));
  const size_t dims = w.size() - 2;
  Shape in_spatial(x.end() - static_cast<std::ptrdiff_t>(dims), x.end());
  if (transposed) return conv_flops(x, w, in_spatial);
  const auto stride = ints(in, 3), dilation = ints(in, 5);
  const bool same = in.size() > 4 && in[4].isString() && in[4].toStringRef() == "same";
  const auto padding = in.size() > 4 && in[4].isString() ? std::vector<int64_t>{0} : ints(in, 4);
  Shape out(dims);
  for (size_t d = 0; d < dims; ++d) {
    if (same) {
      out[d] = in_spatial[d];
      continue;
    }
    const int64_t k = w[2 + d];
    out[d] = (in_spatial[d] + 2 * at_or(padding, d, 0) - at_or(dilation, d, 1) * (k - 1) - 1) / at_or(stride, d, 1) + 1;
  }
  return conv_flops(x, w, out);
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
// dilation, transposed, output_padding, groups, output_mask): grad-input and
// grad-weight each cost one forward-sized convolution, counted only when the
// output mask asks for them (FlopCounterMode's conv_backward_flop).
double convolution_backward(Inputs in) {
  const Shape g = shape(in, 0), x = shape(in, 1), w = shape(in, 2);
  if (g.empty() || x.empty() || w.size() < 3) return 0;
  const size_t dims = w.size() - 2;
  const Shape& spatial_source = flag(in, 7) ? x : g;
  const Shape spatial(spatial_source.end() - static_cast<std::ptrdiff_t>(dims), spatial_source.end());
  const double one = conv_flops(x, w, spatial);
  return (mask_bit(in, 10, 0) ? one : 0) + (mask_bit(in, 10, 1) ? one : 0);
}

// 2·M·K·N, with broadcast batch dimensions (matmul's rules for 1-D operands).
double matmul(Shape a, Shape b) {
  if (a.empty() || b.empty()) return 0;
  if (a.size() == 1 && b.size() == 1) return 2.0 * static_cast<double>(a[0]);
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const double m = static_cast<double>(a[a.size() - 2]), k = static_cast<double>(a.back()),
               n = static_cast<double>(b.back());
  // Broadcast batch: the longer batch shape, with size-1 dims taking the other's size.
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  if (ba.size() < bb.size()) std::swap(ba, bb);
  const size_t off = ba.size() - bb.size();
  for (size_t i = 0; i < bb.size(); ++i) ba[off + i] = std::max(ba[off + i], bb[i]);
  return 2.0 * product(ba) * m * k * n;
}

// linear(input, weight[N, K], bias): 2 · (rows of input) · K · N.
double linear(Inputs in) {
  const Shape x = shape(in, 0), w = shape(in, 1);
  if (x.empty() || w.empty()) return 0;
  const double n = w.size() == 2 ? static_cast<double>(w[0]) : 1.0;
  return 2.0 * product(x) * n;
}

// Attention forward: q [..., L, E], k [..., S, E], v [..., S, Ev]:
// scores q·kᵀ (2·B·L·S·E) plus weights·v (2·B·L·S·Ev), B = ∏ leading dims of q
// (FlopCounterMode's sdpa_flop_count).
double attention(const Shape& q, const Shape& k, const Shape& v) {
  if (q.size() < 2 || k.size() < 2 || v.size() < 2) return 0;
  const double batch = product(q, 0, q.size() - 2), l = static_cast<double>(q[q.size() - 2]),
               e = static_cast<double>(q.back()), s = static_cast<double>(k[k.size() - 2]),
               ev = static_cast<double>(v.back());
  return 2.0 * batch * l * s * e + 2.0 * batch * l * s * ev;
}

// Attention backward (grad_out, q, k, v, ...): FlopCounterMode's
// sdpa_backward_flop_count, which recomputes the scores:
// 2·B·L·S·(3·E + 2·Ev).
double attention_backward(Inputs in) {
  const Shape q = shape(in, 1), k = shape(in, 2), v = shape(in, 3);
  if (q.size() < 2 || k.size() < 2 || v.size() < 2) return 0;
  const double batch = product(q, 0, q.size() - 2), l = static_cast<double>(q[q.size() - 2]),
               e = static_cast<double>(q.back()), s = static_cast<double>(k[k.size() - 2]),
               ev = static_cast<double>(v.back());
  return 2.0 * batch * l * s * (3.0 * e + 2.0 * ev);
}

// Fused recurrent layers (our rule; FlopCounterMode has none): every weight
// matrix W (w_ih, w_hh, and w_hr with projections) multiplies one vector per
// time step and sequence, for each layer and direction, so the matrix products
// cost 2 · T·B · Σ numel(W). Gate non-linearities and bias adds are not
// counted, as FlopCounterMode counts no element-wise op.
double rnn_weights_flops(double rows, const c10::List<at::Tensor>& weights) {
  double sum = 0;
  for (const at::Tensor& w : weights)
    if (w.defined() && w.dim() == 2) sum += static_cast<double>(w.numel());
  return 2.0 * rows * sum;
}

double rows_of(const Shape& x) { return x.empty() ? 0 : product(x, 0, x.size() - 1); }

// aten::lstm/gru/rnn_tanh/rnn_relu. The .input overloads take
// (input, hx, params, ...); the .data overloads (packed sequences) take
// (data, batch_sizes, hx, params, ...), recognisable by a 1-D batch_sizes.
double rnn(Inputs in) {
  const Shape x = shape(in, 0);
  const Shape second = shape(in, 1);
  const bool packed = second.size() == 1;
  const size_t params = packed ? 3 : 2;
  if (params >= in.size() || !in[params].isTensorList()) return 0;
  return rnn_weights_flops(rows_of(x), in[params].toTensorList());
}

// _cudnn_rnn_backward(input, weight[], ..., output_mask[4]): grad-input and
// grad-weight each cost one forward pass of the matrix products.
double cudnn_rnn_backward(Inputs in) {
  if (in.size() < 2 || !in[1].isTensorList()) return 0;
  const double one = rnn_weights_flops(rows_of(shape(in, 0)), in[1].toTensorList());
  const size_t mask = in.size() - 1;
  return (mask_bit(in, mask, 0) ? one : 0) + (mask_bit(in, mask, 3) ? one : 0);
}

// mkldnn_rnn_layer_backward(input, w_ih, w_hh, ...): one layer and direction;
// grad-input and grad-weight, each forward-sized.
double mkldnn_rnn_layer_backward(Inputs in) {
  const double rows = rows_of(shape(in, 0));
  const double w = product(shape(in, 1)) + product(shape(in, 2));
  return 2.0 * 2.0 * rows * w;
}

// Embedding bags gather rows: 0 FLOPs, bytes = indices × row bytes.
// embedding_bag(weight, indices, offsets, ...) and its backward ops
// (grad, indices, ...) for the dense backward that scatters as many rows.
double embedding_bag_bytes(Inputs in, size_t table, size_t indices) {
  const Shape w = shape(in, table);
  if (w.size() != 2 || indices >= in.size() || !in[indices].isTensor()) return 0;
  const auto& t = in[table].toTensor();
  return static_cast<double>(in[indices].toTensor().numel()) * static_cast<double>(w[1]) *
         static_cast<double>(t.element_size());
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

enum class Rule {
  none,
  conv,
  conv_generic,
  conv_transpose,
  conv_backward,
  mm,
  addmm,
  bmm,
  baddbmm,
  matmul,
  linear,
  sdpa,
  sdpa_backward,
  rnn,
  cudnn_rnn_backward,
  mkldnn_rnn_backward,
  bag,
  bag_backward
};

Rule rule_for(std::string_view op) {
  if (!starts_with(op, "aten::")) return Rule::none;
  op.remove_prefix(6);
  if (op == "convolution" || op == "_convolution") return Rule::conv_generic;
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return Rule::conv;
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d") return Rule::conv_transpose;
  if (op == "convolution_backward") return Rule::conv_backward;
  if (op == "mm") return Rule::mm;
  if (op == "addmm") return Rule::addmm;
  if (op == "bmm") return Rule::bmm;
  if (op == "baddbmm") return Rule::baddbmm;
  if (op == "matmul") return Rule::matmul;
  if (op == "linear") return Rule::linear;
  if (op == "scaled_dot_product_attention") return Rule::sdpa;
  if (starts_with(op, "_scaled_dot_product_") && ends_with(op, "_backward")) return Rule::sdpa_backward;
  if (starts_with(op, "_scaled_dot_product_") && op != "_scaled_dot_product_attention_math")
    return Rule::sdpa;  // the backend kernels: flash, flash_for_cpu, efficient, cudnn
  if (op == "lstm" || op == "gru" || op == "rnn_tanh" || op == "rnn_relu") return Rule::rnn;
  if (op == "_cudnn_rnn_backward") return Rule::cudnn_rnn_backward;
  if (op == "mkldnn_rnn_layer_backward") return Rule::mkldnn_rnn_backward;
  if (op == "embedding_bag" || op == "_embedding_bag" || op == "_embedding_bag_forward_only") return Rule::bag;
  if (op == "_embedding_bag_backward" || op == "_embedding_bag_dense_backward" ||
      op == "_embedding_bag_sparse_backward")
    return Rule::bag_backward;
  return Rule::none;
}

}  // namespace

bool has_flop_rule(std::string_view op) { return rule_for(op) != Rule::none; }

OpCost flop_cost(std::string_view op, c10::ArrayRef<c10::IValue> in) {
  OpCost c;
  switch (rule_for(op)) {
    case Rule::none: break;
    case Rule::conv: c.flops = convolution(in, false, false); break;
    case Rule::conv_generic: c.flops = convolution(in, true, false); break;
    case Rule::conv_transpose: c.flops = convolution(in, false, true); break;
    case Rule::conv_backward: c.flops = convolution_backward(in); break;
    case Rule::mm:
    case Rule::bmm:
    case Rule::matmul: c.flops = matmul(shape(in, 0), shape(in, 1)); break;
    case Rule::addmm:
    case Rule::baddbmm: c.flops = matmul(shape(in, 1), shape(in, 2)); break;  // bias add not counted
    case Rule::linear: c.flops = linear(in); break;
    case Rule::sdpa: c.flops = attention(shape(in, 0), shape(in, 1), shape(in, 2)); break;
    case Rule::sdpa_backward: c.flops = attention_backward(in); break;
    case Rule::rnn: c.flops = rnn(in); break;
    case Rule::cudnn_rnn_backward: c.flops = cudnn_rnn_backward(in); break;
    case Rule::mkldnn_rnn_backward: c.flops = mkldnn_rnn_layer_backward(in); break;
    case Rule::bag: c.bytes = embedding_bag_bytes(in, 0, 1); break;
    case Rule::bag_backward: {
      // (grad, indices, offsets, ..., num_weights, ...): bytes of the rows written.
      const Shape g = shape(in, 0);
      if (g.size() == 2 && in.size() > 1 && in[1].isTensor())
        c.bytes = static_cast<double>(in[1].toTensor().numel()) * static_cast<double>(g[1]) *
                  static_cast<double>(in[0].toTensor().element_size());
      break;
    }
  }
  return c;
}

}  // namespace tbd
