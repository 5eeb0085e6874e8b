// fp16 loss scaling (torch.amp.GradScaler's algorithm), run here on CPU
// tensors: the kernels are the same ones CUDA runs use.
#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <limits>

#include "tbd/core/grad_scaler.h"
#include "tbd/core/phases.h"

namespace tbd {
namespace {

struct Net {
  torch::nn::Linear layer{nullptr};
  std::unique_ptr<torch::optim::SGD> sgd;
  explicit Net(uint64_t seed) {
    torch::manual_seed(seed);
    layer = torch::nn::Linear(4, 1);
    sgd = std::make_unique<torch::optim::SGD>(layer->parameters(), torch::optim::SGDOptions(0.1));
  }
  torch::Tensor loss(const torch::Tensor& x) { return layer->forward(x).pow(2).mean(); }
};

TEST(GradScaler, ScaledBackwardThenUnscaleGivesTheTrueGradients) {
  const auto x = torch::randn({8, 4});
  Net plain(1), scaled(1);
  plain.loss(x).backward();
  GradScaler scaler(scaled.layer->parameters(), {1024.0, 2.0, 0.5, 2000});
  scaler.scale(scaled.loss(x)).backward();
  EXPECT_TRUE(torch::allclose(scaled.layer->weight.grad(), plain.layer->weight.grad() * 1024.0));
  scaler.unscale();
  scaler.unscale();  // idempotent within a step
  EXPECT_TRUE(torch::allclose(scaled.layer->weight.grad(), plain.layer->weight.grad()));
  EXPECT_TRUE(scaler.step_allowed());
}

TEST(GradScaler, PhasesSkipANonFiniteStepAndBackOff) {
  Net net(2);
  GradScaler scaler(net.layer->parameters(), {65536.0, 2.0, 0.5, 2000});
  Phases phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  phases.set_grad_scaler(&scaler);
  const auto before = net.layer->weight.detach().clone();
  const auto x = torch::randn({8, 4});
  x[0][0] = std::numeric_limits<float>::infinity();  // an overflow, as fp16 would have
  phases.backward(net.loss(x));
  phases.optimizer_step(*net.sgd);
  EXPECT_TRUE(torch::equal(net.layer->weight.detach(), before)) << "the step must be skipped";
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 32768.0);
  EXPECT_FALSE(net.layer->weight.grad().defined() && net.layer->weight.grad().abs().sum().item<float>() != 0)
      << "gradients are cleared after a skipped step";
}

TEST(GradScaler, PhasesTrainLikeAnUnscaledRunAndGrowTheScale) {
  Net plain(3), scaled(3);
  GradScaler scaler(scaled.layer->parameters(), {256.0, 2.0, 0.5, 3});
  Phases plain_phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  Phases scaled_phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  scaled_phases.set_grad_scaler(&scaler);
  for (int step = 0; step < 4; ++step) {
    const auto x = torch::randn({8, 4});
    plain_phases.backward(plain.loss(x));
    plain_phases.optimizer_step(*plain.sgd);
    scaled_phases.backward(scaled.loss(x));
    scaled_phases.optimizer_step(*scaled.sgd);
  }
  EXPECT_TRUE(torch::allclose(scaled.layer->weight, plain.layer->weight, 1e-5, 1e-6));
  EXPECT_EQ(scaler.steps(), 4);
  EXPECT_EQ(scaler.skipped_steps(), 0);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0);  // doubled after 3 clean steps, not yet again
}

}  // namespace
}  // namespace tbd
