#include "tbd/measure/layer_sweep.h"

#include <ATen/ops/convolution.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randn_like.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>

#include <chrono>
#include <optional>

#include "tbd/core/error.h"
#include "tbd/measure/machine/device.h"

namespace tbd {

namespace {

// One output-channel count of the layer: its own weight, bias and output gradient.
struct Variant {
  int64_t channels = 0;
  at::Tensor weight, bias, grad_output;
  std::vector<double> forward_s, training_s;  // per repetition, seconds per call
};

at::Tensor apply(const LayerGeometry& g, const at::Tensor& x, const Variant& v) {
  const std::optional<at::Tensor> bias = v.bias.defined() ? std::optional<at::Tensor>(v.bias) : std::nullopt;
  if (g.kind == "linear") return at::linear(x, v.weight, bias);
  const std::vector<int64_t> no_output_padding(g.stride.size(), 0);
  return at::convolution(x, v.weight, bias, g.stride, g.padding, g.dilation, false, no_output_padding, g.groups);
}

// Forward + backward as training runs it: the gradients of the weight, the
// bias and (where the model computes it) the input.
void train_once(const LayerGeometry& g, const at::Tensor& x, const Variant& v) {
  const at::Tensor y = apply(g, x, v);
  std::vector<at::Tensor> wrt = {v.weight};
  if (v.bias.defined()) wrt.push_back(v.bias);
  if (x.requires_grad()) wrt.push_back(x);
  (void)torch::autograd::grad({y}, wrt, {v.grad_output});
}

at::MemoryFormat memory_format_of(const LayerGeometry& g) {
  if (!g.channels_last) return at::MemoryFormat::Contiguous;
  return g.input.size() == 5 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast;
}

using Clock = std::chrono::steady_clock;

std::vector<ChannelTime> sweep_counts(const LayerGeometry& g, const std::vector<int64_t>& channels, c10::Device device,
                                      const SweepTiming& timing, const std::function<bool()>& interrupted) {
  const c10::AutoGradMode grad(true);
  const auto options = at::TensorOptions().dtype(scalar_type_named(g.dtype)).device(device);
  const at::Tensor x =
      at::randn(g.input, options).contiguous(memory_format_of(g)).requires_grad_(g.input_requires_grad);
  std::vector<Variant> variants;
  for (const int64_t c : channels) {
    Variant v;
    v.channels = c;
    std::vector<int64_t> w = g.weight;
    w.front() = c;
    v.weight = at::randn(w, options).mul_(0.05);
    if (g.kind != "linear") v.weight = v.weight.contiguous(memory_format_of(g));
    v.weight.requires_grad_(true);
    if (g.bias) v.bias = at::randn({c}, options).requires_grad_(true);
    {
      const c10::NoGradGuard no_grad;
      v.grad_output = at::randn_like(apply(g, x, v));
    }
    variants.push_back(std::move(v));
  }
  for (const auto& v : variants)
    for (int i = 0; i < timing.warmup; ++i) {
      (void)apply(g, x, v);
      train_once(g, x, v);
    }
  synchronize(device);
  const auto timed = [&](auto&& call) {
    synchronize(device);
    const auto t0 = Clock::now();
    for (int i = 0; i < timing.calls; ++i) call();
    synchronize(device);
    return std::chrono::duration<double>(Clock::now() - t0).count() / timing.calls;
  };
  const size_t n = variants.size();
  for (int r = 0; r < timing.repeat; ++r) {
    if (interrupted && interrupted()) throw Error("the sweep was interrupted");
    for (size_t k = 0; k < n; ++k) {
      Variant& v = variants[(k + static_cast<size_t>(r)) % n];
      v.forward_s.push_back(timed([&] { (void)apply(g, x, v); }));
      v.training_s.push_back(timed([&] { train_once(g, x, v); }));
    }
  }
  std::vector<ChannelTime> out;
  for (const auto& v : variants) out.push_back({v.channels, summarize(v.forward_s), summarize(v.training_s)});
  return out;
}

}  // namespace

std::vector<ChannelTime> sweep_layer(const LayerGeometry& g, const std::vector<int64_t>& channels, c10::Device device,
                                     const SweepTiming& timing, const std::function<bool()>& interrupted) {
  if (const auto why = g.unsweepable_reason(); !why.empty()) throw Error("cannot sweep " + why);
  try {
    return sweep_counts(g, channels, device, timing, interrupted);
  } catch (const c10::OutOfMemoryError&) {
    throw Error("out of device memory sweeping " + g.describe() + " up to " + std::to_string(channels.back()) +
                " output channels: a smaller --batch-size, or fewer or smaller --channels");
  }
}

}  // namespace tbd
