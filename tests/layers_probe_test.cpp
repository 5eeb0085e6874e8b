// The layers probe: each convolution and linear layer found by its weight,
// with the input shape it really had, its calls and its forward and
// backward time, on a small model run by hand.
#include <gtest/gtest.h>

#include <torch/autograd.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "tbd/measure/probes/layers_probe.h"
#include "tbd/nn/linear.h"

namespace tbd {
namespace {

// A stem convolution (its input needs no gradient), a linear layer applied
// to a 3-D input through ATen's linear (tbd's nn::linear), and LibTorch's
// own Linear module (addmm with the transposed weight), called twice.
struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).stride(2).padding(1)))),
        proj(register_module("proj", torch::nn::Linear(16, 16))),
        head(register_module("head", torch::nn::Linear(128, 128))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = conv(x).view({x.size(0), 8, 16});  // [2, 8, 4, 4] -> [2, 8, 16]
    y = nn::linear(proj, y).flatten(1);         // [2, 128]
    return head(head(y));
  }
  torch::nn::Conv2d conv;
  torch::nn::Linear proj, head;
};
TORCH_MODULE(Net);

// The probe looks for `net`'s weights, as the runner hands it a workload's.
void watch(LayersProbe& probe, Net& net) {
  std::map<std::string, at::Tensor> named;
  for (const auto& p : net->named_parameters()) named[p.key()] = p.value();
  probe.watch(named);
}

const LayerRecord* find(const std::vector<LayerRecord>& records, const std::string& module) {
  for (const auto& r : records)
    if (r.module == module) return &r;
  return nullptr;
}

TEST(LayersProbe, NamesEachLayerWithTheInputItHad) {
  Net net;
  LayersProbe probe;
  watch(probe, net);
  probe.on_iteration_begin(true);
  const auto x = torch::randn({2, 3, 8, 8});
  probe.on_phase_begin(Phase::forward);
  const auto loss = net->forward(x).sum();
  probe.on_phase_end(Phase::forward);
  probe.on_phase_begin(Phase::backward);
  loss.backward();
  probe.on_phase_end(Phase::backward);
  const auto records = probe.records();
  probe.on_window_end(0);

  ASSERT_EQ(records.size(), 3u);
  const auto* conv = find(records, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->geometry.kind, "conv2d");
  EXPECT_EQ(conv->geometry.input, (std::vector<int64_t>{2, 3, 8, 8}));
  EXPECT_EQ(conv->geometry.weight, (std::vector<int64_t>{8, 3, 3, 3}));
  EXPECT_EQ(conv->geometry.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->geometry.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(conv->geometry.groups, 1);
  EXPECT_TRUE(conv->geometry.bias);
  EXPECT_FALSE(conv->geometry.input_requires_grad);  // the image
  EXPECT_EQ(conv->geometry.dtype, "float32");

  const auto* proj = find(records, "proj");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->geometry.kind, "linear");
  EXPECT_EQ(proj->geometry.input, (std::vector<int64_t>{2, 8, 16}));
  EXPECT_TRUE(proj->geometry.input_requires_grad);

  const auto* head = find(records, "head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->geometry.input, (std::vector<int64_t>{2, 128}));
  EXPECT_EQ(head->calls, 2);
  for (const auto& r : records) {
    EXPECT_GT(r.forward_s, 0) << r.module;
    EXPECT_GT(r.backward_s, 0) << r.module << ": its autograd nodes were not matched";
  }
}

// wgan's gradient penalty: a backward with create_graph inside the forward
// phase multiplies by the weights again (mm with the weight, not its
// transpose); those calls are the layers' backward, not new layer calls.
TEST(LayersProbe, AGradientTakenInTheForwardPhaseIsNoLayerCall) {
  Net net;
  LayersProbe probe;
  watch(probe, net);
  probe.on_iteration_begin(true);
  probe.on_phase_begin(Phase::forward);
  const auto x = torch::randn({2, 3, 8, 8}).requires_grad_(true);
  const auto y = net->forward(x);
  const auto penalty = torch::autograd::grad({y.sum()}, {x}, {}, true, true)[0].pow(2).sum();
  probe.on_phase_end(Phase::forward);
  const auto records = probe.records();
  probe.on_window_end(0);
  ASSERT_EQ(records.size(), 3u);
  const auto* head = find(records, "head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->calls, 2);
  EXPECT_EQ(head->geometry.input, (std::vector<int64_t>{2, 128}));
  EXPECT_GT(head->backward_s, 0);
  EXPECT_TRUE(penalty.requires_grad());
}

TEST(LayersProbe, CountsNothingOutsideTheForwardPhaseOrMeasuredIterations) {
  Net net;
  LayersProbe probe;
  watch(probe, net);
  probe.on_iteration_begin(false);  // warm-up
  probe.on_phase_begin(Phase::forward);
  (void)net->forward(torch::randn({2, 3, 8, 8}));
  probe.on_phase_end(Phase::forward);
  probe.on_iteration_begin(true);  // measured, but outside the forward phase
  (void)net->forward(torch::randn({2, 3, 8, 8}));
  EXPECT_TRUE(probe.records().empty());
  probe.on_window_end(0);
}

}  // namespace
}  // namespace tbd
