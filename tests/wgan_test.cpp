#include <gtest/gtest.h>

#include <torch/optim/adam.h>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/data/image_transforms.h"
#include "tbd/data/jpeg.h"
#include "tbd/nn/wgan_resnet.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// Parameters of gan_64x64.py's GoodGenerator / GoodDiscriminator in closed
// form, read off the architecture: conv(k, in, out, bias) = k²·in·out (+ out),
// a norm layer has a scale and an offset per channel.
int64_t conv(int64_t k, int64_t in, int64_t out, bool bias) { return k * k * in * out + (bias ? out : 0); }
int64_t norm(int64_t channels) { return 2 * channels; }
int64_t linear(int64_t in, int64_t out) { return in * out + out; }

// shortcut 1×1 conv; norm, 3×3 conv (no bias), norm, 3×3 conv.
int64_t up_block(int64_t in, int64_t out) {
  return conv(1, in, out, true) + norm(in) + conv(3, in, out, false) + norm(out) + conv(3, out, out, true);
}
int64_t down_block(int64_t in, int64_t out) {
  return conv(1, in, out, true) + norm(in) + conv(3, in, in, false) + norm(in) + conv(3, in, out, true);
}
int64_t generator_parameters(int64_t d, int64_t latent) {
  return linear(latent, 4 * 4 * 8 * d) + up_block(8 * d, 8 * d) + up_block(8 * d, 4 * d) + up_block(4 * d, 2 * d) +
         up_block(2 * d, d) + norm(d) + conv(3, d, 3, true);
}
int64_t critic_parameters(int64_t d) {
  return conv(3, 3, d, true) + down_block(d, 2 * d) + down_block(2 * d, 4 * d) + down_block(4 * d, 8 * d) +
         down_block(8 * d, 8 * d) + linear(4 * 4 * 8 * d, 1);
}

TEST(Wgan, ParameterCountsMatchTheClosedForm) {
  for (const int64_t d : {64, 32, 4}) {
    nn::WganConfig config;
    config.dim = d;
    EXPECT_EQ(count_parameters(*nn::WganGenerator(config)), generator_parameters(d, 128)) << "dim " << d;
    EXPECT_EQ(count_parameters(*nn::WganCritic(config)), critic_parameters(d)) << "dim " << d;
  }
  EXPECT_EQ(generator_parameters(64, 128), 8'540'483);
  EXPECT_EQ(critic_parameters(64), 7'491'841);
  const auto w = create_workload("wgan");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "wgan")), 16'032'324);
}

TEST(Wgan, GeneratorMakesImagesInTanhRangeAndCriticScoresEach) {
  nn::WganConfig config;
  config.dim = 8;
  nn::WganGenerator g(config);
  nn::WganCritic d(config);
  torch::NoGradGuard no_grad;
  const auto images = g->forward(torch::randn({3, 128}));
  EXPECT_EQ(images.sizes(), (std::vector<int64_t>{3, 3, 64, 64}));
  EXPECT_LE(images.abs().max().item<float>(), 1.0f);
  EXPECT_EQ(d->forward(images).sizes(), (std::vector<int64_t>{3}));
}

// The gradient penalty is per sample, so the critic must not mix samples
// (no batch norm): a sample's score is the same alone or in a batch.
TEST(Wgan, CriticScoresEachSampleIndependently) {
  nn::WganConfig config;
  config.dim = 4;
  nn::WganCritic d(config);
  d->train();
  for (const auto& m : d->modules(false)) EXPECT_EQ(m->as<torch::nn::BatchNorm2d>(), nullptr);
  torch::NoGradGuard no_grad;
  const auto x = torch::rand({5, 3, 64, 64}) * 2 - 1;
  const auto together = d->forward(x);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_NEAR(d->forward(x.slice(0, i, i + 1)).item<float>(), together[i].item<float>(), 1e-4) << i;
}

// The generator's update reaches its weights through the critic: against a
// fixed critic, −E[D(G(z))] falls.
TEST(Wgan, GeneratorLossFallsAgainstAFixedCritic) {
  torch::manual_seed(3);
  nn::WganConfig config;
  config.dim = 4;
  nn::WganGenerator g(config);
  nn::WganCritic d(config);
  for (auto& p : d->parameters()) p.requires_grad_(false);
  torch::optim::Adam adam(g->parameters(), torch::optim::AdamOptions(1e-3).betas({0.0, 0.9}));
  const auto z = torch::randn({8, 128});
  std::vector<double> losses;
  for (int i = 0; i < 20; ++i) {
    const auto loss = -d->forward(g->forward(z)).mean();
    losses.push_back(loss.item<double>());
    adam.zero_grad();
    loss.backward();
    adam.step();
  }
  EXPECT_LT(losses.back(), losses.front() - 0.1 * std::abs(losses.front()) - 1e-3)
      << losses.front() << " -> " << losses.back();
}

TEST(Wgan, TinyIterationConsumesCriticItersBatchesAndGivesFiniteLoss) {
  WorkloadUnderTest t("wgan", Scale::tiny, {}, 4);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 5 * 4);  // real images read by the critic's five updates
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{20, 3, 64, 64}));
  EXPECT_LE(b.inputs[0].abs().max().item<float>(), 1.0f);
  EXPECT_TRUE(std::isfinite(t.step(b)));
  nn::WganConfig tiny;
  tiny.dim = 4;
  const ParameterSet s = t.workload->state();
  EXPECT_EQ(s.parameter_count(), generator_parameters(4, 128) + critic_parameters(4));
  // Adam: two moments per parameter of both networks, and the fused step's
  // float counter (a scalar) per parameter tensor.
  int64_t moments = 0;
  size_t counters = 0;
  for (const auto& m : s.optimizer_state) {
    if (m.dim() == 0)
      ++counters;
    else
      moments += m.numel();
  }
  EXPECT_EQ(moments, 2 * s.parameter_count());
  EXPECT_EQ(counters, s.weights.size());
  // Every parameter trains again after the generator update froze the critic.
  EXPECT_EQ(s.trainable_parameter_count(), s.parameter_count());
}

TEST(Wgan, CriticLossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("wgan", Scale::tiny, {}, 4);
  const auto losses = t.train_on_one_batch(12);  // 60 critic updates
  for (double l : losses) ASSERT_TRUE(std::isfinite(l));
  auto mean = [&](size_t from, size_t to) {
    double s = 0;
    for (size_t i = from; i < to; ++i) s += losses[i];
    return s / static_cast<double>(to - from);
  };
  // The critic learns to tell the fixed real batch from the generator's
  // samples: its loss (−Wasserstein estimate + penalty) drops.
  EXPECT_LT(mean(8, 12), mean(0, 4) - 0.5) << losses.front() << " -> " << losses.back();
}

TEST(Wgan, BadSettingsAreUsageErrors) {
  const auto w = create_workload("wgan");
  const auto& specs = w->info().settings;
  EXPECT_NE(testing::error_of<UsageError>([&] {
              Settings(specs, {{"critic_iters", "0"}}, "wgan");
            }).find("critic_iters"),
            std::string::npos);
  EXPECT_NE(testing::error_of<UsageError>([&] {
              Settings(specs, {{"beta2", "1.5"}}, "wgan");
            }).find("beta2"),
            std::string::npos);
  EXPECT_NE(testing::error_of<UsageError>([&] {
              Settings(specs, {{"gp_lambda", "ten"}}, "wgan");
            }).find("gp_lambda"),
            std::string::npos);
}

TEST(Wgan, RealImagesAreResizedWholeToTheTanhRange) {
  RgbImage img;
  img.width = 90;
  img.height = 30;
  img.pixels.assign(static_cast<size_t>(90 * 30 * 3), 0);
  for (int y = 0; y < 30; ++y)
    for (int x = 45; x < 90; ++x) img.pixels[(static_cast<size_t>(y) * 90 + x) * 3 + 1] = 255;  // right half green
  const auto t = resize_to_tanh_range(img, 64);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 64, 64}));
  EXPECT_NEAR(t.min().item<float>(), -1.0f, 1e-6);
  EXPECT_NEAR(t.max().item<float>(), 1.0f, 1e-6);
  // No crop: the left half stays black and the right half green, at every row.
  EXPECT_NEAR(t[1].slice(1, 0, 30).max().item<float>(), -1.0f, 1e-5);
  EXPECT_NEAR(t[1].slice(1, 34, 64).min().item<float>(), 1.0f, 1e-5);
  EXPECT_NEAR(t[0].max().item<float>(), -1.0f, 1e-5);
}

TEST(Wgan, TrainsOnAnImageFolder) {
  testing::TempDir dir;
  RgbImage img;
  img.width = 40;
  img.height = 50;
  img.pixels.assign(static_cast<size_t>(40 * 50 * 3), 128);
  for (int i = 0; i < 3; ++i) testing::write_bytes(dir / ("a/" + std::to_string(i) + ".jpg"), encode_jpeg(img));
  WorkloadUnderTest t("wgan", Scale::tiny, {{"critic_iters", "2"}}, 3, c10::ScalarType::Float, dir.path().string());
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 6);
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{6, 3, 64, 64}));
  EXPECT_NEAR(b.inputs[0].mean().item<float>(), 128 / 127.5 - 1, 0.02);  // grey stays grey
  EXPECT_TRUE(std::isfinite(t.step(b)));
}

}  // namespace
}  // namespace tbd
