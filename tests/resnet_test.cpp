#include <gtest/gtest.h>

#include <cmath>

#include "tbd/nn/memory_format.h"
#include "tbd/nn/resnet.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// torchvision.models.resnet{18,34,50,101,152}(): sum(p.numel() for p in m.parameters()).
TEST(ResNet, FullScaleParameterCountsMatchTorchvision) {
  const std::vector<std::pair<int, int64_t>> reference = {
      {18, 11'689'512}, {34, 21'797'672}, {50, 25'557'032}, {101, 44'549'160}, {152, 60'192'808}};
  for (const auto& [depth, count] : reference) {
    nn::ResNetConfig config;
    config.depth = depth;
    EXPECT_EQ(count_parameters(*nn::ResNet(config)), count) << "depth " << depth;
  }
}

TEST(ResNet, RegistryReportsTheResNet50Count) {
  const auto w = create_workload("resnet50");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "resnet50")), 25'557'032);
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {{"depth", "101"}}, "resnet50")), 44'549'160);
}

TEST(ResNet, FullScaleForwardGivesLogitsPerClass) {
  nn::ResNetConfig config;
  nn::ResNet model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(torch::randn({1, 3, 224, 224})).sizes(), (std::vector<int64_t>{1, 1000}));
}

TEST(ResNet, TinyStepGivesFiniteLoss) {
  WorkloadUnderTest t("resnet50", Scale::tiny, {}, 8);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 8);
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{8, 3, 32, 32}));
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(10.0), 1.5);  // 10 classes, freshly initialised
  EXPECT_EQ(t.workload->state().parameter_count(), count_parameters(*nn::ResNet([] {
              nn::ResNetConfig c;
              c.width = 8;
              c.blocks = {1, 1, 1, 1};
              c.classes = 10;
              return c;
            }())));
}

TEST(ResNet, LossFallsOnOneFixedBatch) {
  for (const char* depth : {"18", "50"}) {
    WorkloadUnderTest t("resnet50", Scale::tiny, {{"depth", depth}}, 16);
    const auto losses = t.train_on_one_batch(30);
    EXPECT_LT(losses.back(), 0.5 * losses.front())
        << "depth " << depth << ": " << losses.front() << " -> " << losses.back();
  }
}

TEST(ResNet, Bf16AutocastStepRuns) {
  WorkloadUnderTest t("resnet50", Scale::tiny, {}, 4, c10::ScalarType::BFloat16);
  const auto losses = t.train_on_one_batch(2);
  EXPECT_TRUE(std::isfinite(losses[0]));
  EXPECT_TRUE(std::isfinite(losses[1]));
}

TEST(ResNet, OptimizerStateAppearsAfterTheFirstStep) {
  WorkloadUnderTest t("resnet50", Scale::tiny, {}, 4);
  EXPECT_TRUE(t.workload->state().optimizer_state.empty());
  t.train_on_one_batch(1);
  const ParameterSet s = t.workload->state();
  int64_t momentum = 0;
  for (const auto& m : s.optimizer_state) momentum += m.numel();
  EXPECT_EQ(momentum, s.parameter_count());  // one momentum buffer per parameter
}

TEST(ResNet, ChannelsLastTrainsLikeContiguous) {
  // The same seed, batch and step in both layouts: the weights are stored
  // channels-last, and the losses agree to fp32 rounding (a layout changes
  // the summation order inside convolutions, nothing else).
  std::vector<double> losses[2];
  for (const MemoryFormat format : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
    RunOptions o;
    o.workload = "resnet50";
    o.scale = Scale::tiny;
    o.batch_size = 4;
    o.data_workers = 1;
    o.memory_format = format;
    testing::WorkloadUnderTest t(o);
    EXPECT_EQ(t.workload->configuration()["memory_format"], to_string(format));
    // 1×1 kernels are laid out alike in both formats; 3×3 ones differ.
    bool any_nhwc_only = false;
    for (const auto& p : t.workload->state().weights) {
      if (p.dim() != 4) continue;
      EXPECT_TRUE(p.is_contiguous(format == MemoryFormat::channels_last ? at::MemoryFormat::ChannelsLast
                                                                        : at::MemoryFormat::Contiguous));
      any_nhwc_only |= !p.is_contiguous();
    }
    EXPECT_EQ(any_nhwc_only, format == MemoryFormat::channels_last);
    losses[format == MemoryFormat::channels_last] = t.train_on_one_batch(3);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(losses[0][i], losses[1][i], 1e-4 * std::abs(losses[0][i])) << i;
}

TEST(ResNet, MemoryFormatAutoIsChannelsLastOnCudaAndAnExplicitChoiceWins) {
  // (auto on the CPU is a measured constant, docs/workloads.md#memory-format.)
  EXPECT_EQ(nn::resolve_memory_format(MemoryFormat::contiguous, torch::Device(torch::kCPU)),
            at::MemoryFormat::Contiguous);
  EXPECT_EQ(nn::resolve_memory_format(MemoryFormat::automatic, torch::Device(torch::kCUDA, 0)),
            at::MemoryFormat::ChannelsLast);
  EXPECT_EQ(nn::resolve_memory_format(MemoryFormat::contiguous, torch::Device(torch::kCUDA, 0)),
            at::MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace tbd
