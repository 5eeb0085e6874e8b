#include <gtest/gtest.h>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/data/spectrogram.h"
#include "tbd/nn/deepspeech2.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// By hand from the layer shapes (deepspeech.pytorch's DeepSpeech2):
//   conv1 1→32, 41×11, bias: 32·41·11 + 32 = 14,464; batch norm 64
//   conv2 32→32, 21×11, bias: 32·32·21·11 + 32 = 236,576; batch norm 64
//   frequency rows 161 → (161+40−41)/2+1 = 81 → (81+20−21)/2+1 = 41; GRU input 32·41 = 1,312
//   GRU 1 (bidirectional, no norm): 2·3·(1760·1312 + 1760·1760 + 2·1760) = 32,461,440
//   GRU 2–7: 2·3·(2·1760·1760 + 2·1760) + 2·1760 (norm) = 37,195,840 each, × 6 = 223,175,040
//   output: batch norm 2·1760 = 3,520; linear 1760·29 (no bias) = 51,040
//   total 251,168 + 32,461,440 + 223,175,040 + 3,520 + 51,040 = 255,942,208
TEST(DeepSpeech2, FullScaleParameterCountByHand) {
  const auto w = create_workload("deepspeech2");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "deepspeech2")), 255'942'208);
  EXPECT_EQ(nn::deepspeech2_conv_rows(161), 41);
}

// The closed form agrees with built models: `small` (3 × 512, 12,182,304)
// and `tiny` (8 channels, 2 × 32, 101,672).
TEST(DeepSpeech2, ClosedFormMatchesTheBuiltModel) {
  nn::DeepSpeech2Config small;
  small.rnn_layers = 3;
  small.rnn_hidden = 512;
  EXPECT_EQ(count_parameters(*nn::DeepSpeech2(small)), 12'182'304);
  EXPECT_EQ(nn::deepspeech2_parameters(small), 12'182'304);
  nn::DeepSpeech2Config tiny;
  tiny.conv_channels = 8;
  tiny.rnn_layers = 2;
  tiny.rnn_hidden = 32;
  EXPECT_EQ(count_parameters(*nn::DeepSpeech2(tiny)), 101'672);
  EXPECT_EQ(nn::deepspeech2_parameters(tiny), 101'672);
}

TEST(DeepSpeech2, SpectrogramHas161BinsEvery10Ms) {
  auto t = torch::arange(16000, torch::kFloat) / 16000.0;
  const auto spec = log_spectrogram(torch::sin(2 * 3.14159265358979 * 1000.0 * t));
  EXPECT_EQ(spec.sizes(), (std::vector<int64_t>{161, 101}));
  // A 1 kHz tone lands in bin 1000 / (16000 / 320) = 20.
  EXPECT_EQ(spec.select(1, 50).argmax().item<int64_t>(), 20);
  EXPECT_NEAR(spec.mean().item<double>(), 0.0, 1e-4);  // normalised per utterance
  EXPECT_NEAR(spec.std().item<double>(), 1.0, 1e-3);
  EXPECT_THROW(log_spectrogram(torch::zeros({100})), Error);
}

TEST(DeepSpeech2, VariableLengthsGiveMatchingOutputLengths) {
  nn::DeepSpeech2Config c;
  c.conv_channels = 4;
  c.rnn_layers = 1;
  c.rnn_hidden = 8;
  nn::DeepSpeech2 model(c);
  auto [log_probs, lengths] = model->forward(torch::randn({2, 1, 161, 30}), torch::tensor({30, 17}, torch::kInt64));
  EXPECT_EQ(log_probs.sizes(), (std::vector<int64_t>{15, 2, 29}));
  EXPECT_EQ(lengths[0].item<int64_t>(), 15);
  EXPECT_EQ(lengths[1].item<int64_t>(), 9);
  EXPECT_NEAR(log_probs.exp().sum(2).mean().item<double>(), 1.0, 1e-5);
}

TEST(DeepSpeech2, TinyStepGivesFiniteLoss) {
  WorkloadUnderTest t("deepspeech2", Scale::tiny, {}, 4);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 4);
  EXPECT_EQ(b.inputs[0].size(1), 1);
  EXPECT_EQ(b.inputs[0].size(2), 161);
  // 0.2–0.5 s utterances: 21–51 frames, lengths differ.
  EXPECT_GE(b.inputs[1].min().item<int64_t>(), 21);
  EXPECT_LE(b.inputs[1].max().item<int64_t>(), 51);
  // Frames padded to the longest utterance, rounded up to the 32-frame length bucket.
  EXPECT_EQ(b.inputs[0].size(3), (b.inputs[1].max().item<int64_t>() + 31) / 32 * 32);
  EXPECT_EQ(b.targets[0].size(0), b.targets[1].sum().item<int64_t>());
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 0.0);
  EXPECT_EQ(t.workload->state().parameter_count(), 101'672);
  const double seconds = t.workload->configuration()["audio_seconds_per_utterance"];
  EXPECT_GE(seconds, 0.2);
  EXPECT_LE(seconds, 0.5);
}

TEST(DeepSpeech2, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("deepspeech2", Scale::tiny, {{"lr", "0.003"}}, 4);
  const auto losses = t.train_on_one_batch(30);
  EXPECT_LT(losses.back(), 0.7 * losses.front()) << losses.front() << " -> " << losses.back();
}

}  // namespace
}  // namespace tbd
