// The ops probe: classes, call counts, self time excludes callees.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>

#include "tbd/core/options.h"
#include "tbd/measure/ops/op_classes.h"
#include "tbd/measure/probes/ops_probe.h"
#include "tbd/measure/runner.h"
#include "tbd/nn/layer_scope.h"
#include "test_util.h"

namespace tbd {
namespace {

TEST(OpClasses, NamesMapToClasses) {
  EXPECT_EQ(op_class("aten::convolution_backward"), "conv");
  EXPECT_EQ(op_class("aten::mkldnn_convolution"), "conv");
  EXPECT_EQ(op_class("aten::addmm"), "gemm");
  EXPECT_EQ(op_class("aten::mm"), "gemm");
  EXPECT_EQ(op_class("aten::lstm"), "rnn");
  EXPECT_EQ(op_class("aten::_scaled_dot_product_flash_attention_for_cpu"), "attention");
  EXPECT_EQ(op_class("aten::native_batch_norm_backward"), "norm");
  EXPECT_EQ(op_class("aten::layer_norm"), "norm");
  EXPECT_EQ(op_class("aten::relu_"), "elementwise");
  EXPECT_EQ(op_class("aten::threshold_backward"), "elementwise");
  EXPECT_EQ(op_class("aten::add_"), "elementwise");
  EXPECT_EQ(op_class("aten::sum"), "reduction");
  EXPECT_EQ(op_class("aten::_log_softmax"), "reduction");
  EXPECT_EQ(op_class("aten::max_pool2d_with_indices"), "reduction");
  EXPECT_EQ(op_class("aten::copy_"), "data movement");
  EXPECT_EQ(op_class("aten::cat"), "data movement");
  EXPECT_EQ(op_class("aten::_foreach_add_"), "optimizer");
  EXPECT_EQ(op_class("aten::add_", /*in_optimizer_phase=*/true), "optimizer");
  EXPECT_EQ(op_class("c10d::allreduce_"), "communication");
  EXPECT_EQ(op_class("aten::some_new_op"), "other");
  EXPECT_EQ(op_class("autograd::engine::evaluate_function: ReluBackward0"), "other");
}

TEST(OpsProbe, CountsCallsAndSelfTimeExcludesCallees) {
  OpsProbe probe;
  probe.start();
  probe.set_counting(true);
  auto a = torch::randn({64, 64}), b = torch::randn({64, 64});
  for (int i = 0; i < 3; ++i) torch::matmul(a, b);  // matmul → mm
  probe.set_counting(false);
  torch::matmul(a, b);  // not counted
  probe.stop();
  const auto s = probe.stats();
  ASSERT_TRUE(s.count("aten::matmul|gemm"));
  ASSERT_TRUE(s.count("aten::mm|gemm"));
  EXPECT_EQ(s.at("aten::matmul|gemm").calls, 3);
  EXPECT_EQ(s.at("aten::mm|gemm").calls, 3);
  const auto& mm = s.at("aten::mm|gemm");
  const auto& matmul = s.at("aten::matmul|gemm");
  // matmul's self time leaves out the mm it called.
  EXPECT_LE(matmul.self_s, matmul.total_s - mm.total_s + 1e-9);
  EXPECT_GE(matmul.total_s, mm.total_s);
}

TEST(OpsProbe, ResNetTinyReportsClassesAndTopOps) {
  RunOptions o;
  o.workload = "resnet50";
  o.scale = Scale::tiny;
  o.batch_size = 2;
  o.warmup = 1;
  o.iters = 2;
  o.threads = 1;
  o.quiet = true;
  const auto outcome = testing::run_registered(o, {"ops"});
  const auto& ops = outcome.result.at("ops");
  EXPECT_GT(ops.at("by_class").at("conv").at("self_s").get<double>(), 0);
  EXPECT_GT(ops.at("by_class").at("optimizer").at("calls").get<int64_t>(), 0);
  double share = 0;
  for (const auto& [c, v] : ops.at("by_class").items()) share += v.at("share_of_self").get<double>();
  EXPECT_NEAR(share, 1.0, 1e-9);
  // Tiny ResNet: 1 stem conv + 4 bottlenecks × 3 convs + 4 downsample convs = 17
  // convolutions per forward, each one convolution_backward per instrumented
  // iteration (the timed ones are not watched).
  int64_t conv_backward_calls = 0;
  for (const auto& row : ops.at("by_op"))
    if (row.at("op") == "aten::convolution_backward") conv_backward_calls += row.at("calls").get<int64_t>();
  EXPECT_EQ(ops.at("iterations"), outcome.result.at("instrumented").at("iterations"));
  EXPECT_EQ(conv_backward_calls, ops.at("iterations").get<int64_t>() * 17);
  bool has_top = false;
  for (const auto& [label, text] : outcome.summary) has_top |= label == "top ops";
  EXPECT_TRUE(has_top);
  // Per layer: the four stages and the stem, forward and backward; their
  // convolution_backward calls, found by the autograd node's forward op,
  // inside the stages (3 convolutions per bottleneck, plus downsample).
  std::map<std::string, nlohmann::json> layers;
  double layer_share = 0;
  for (const auto& row : ops.at("by_layer")) {
    layers[row.at("layer")] = row;
    layer_share += row.at("share_of_self").get<double>();
  }
  EXPECT_NEAR(layer_share, 1.0, 1e-9);
  for (const char* name : {"stem", "layer1", "layer2", "layer3", "layer4", "fc"}) {
    ASSERT_TRUE(layers.count(name)) << name << " in " << ops.at("by_layer").dump();
    EXPECT_GT(layers[name].at("forward_self_s").get<double>(), 0) << name;
    EXPECT_GT(layers[name].at("backward_self_s").get<double>(), 0) << name;
  }
  ASSERT_TRUE(layers.count("(no layer)"));  // the loss and the optimizer
}

// Ops inside nn::LayerScope belong to that layer; their backward too, found
// through the autograd node's sequence number, and nested scopes make paths.
TEST(OpsProbe, AttributesForwardAndBackwardToTheNamedLayer) {
  torch::manual_seed(0);
  auto w1 = torch::randn({256, 256}, torch::requires_grad()), w2 = torch::randn({256, 8}, torch::requires_grad());
  OpsProbe probe;
  probe.start();
  probe.set_counting(true);
  torch::Tensor h, y;
  {
    nn::LayerScope outer("encoder");
    {
      nn::LayerScope inner("block");
      h = torch::mm(torch::randn({512, 256}), w1).relu();
    }
  }
  {
    nn::LayerScope head("head");
    y = torch::mm(h, w2);
  }
  y.sum().backward();
  probe.set_counting(false);
  probe.stop();
  const auto s = probe.layer_stats();
  for (const char* key : {"encoder.block|forward", "encoder.block|backward", "head|forward", "head|backward"})
    EXPECT_TRUE(s.count(key)) << key;
  EXPECT_FALSE(s.count("encoder|forward"));  // every op of encoder is inside block
  // The 512×256×256 GEMM's two backward GEMMs outweigh the head's 512×256×8 ones.
  EXPECT_GT(s.at("encoder.block|backward").self_s, s.at("head|backward").self_s);
  ASSERT_TRUE(s.count("(no layer)|forward"));  // sum, outside every layer
}

}  // namespace
}  // namespace tbd
