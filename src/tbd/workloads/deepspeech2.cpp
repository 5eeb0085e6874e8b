// deepspeech2: Deep Speech 2 (Amodei et al. 2016) trained with CTC over 29
// characters on variable-length utterances; SGD with Nesterov momentum and
// gradient-norm clipping, as deepspeech.pytorch.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "tbd/core/rng.h"
#include "tbd/data/librispeech.h"
#include "tbd/data/spectrogram.h"
#include "tbd/nn/deepspeech2.h"
#include "tbd/optim/fast_optimizers.h"
#include "tbd/workloads/recipe.h"
#include "tbd/workloads/workloads.h"

namespace tbd {
namespace {

struct ScaleConfig {
  nn::DeepSpeech2Config model;
  double min_seconds, max_seconds;  // synthetic utterance durations
};

ScaleConfig config_for(Scale scale) {
  ScaleConfig s{{}, 4.0, 16.0};  // full: 7 × 1760 GRUs; LibriSpeech-like 4–16 s utterances
  if (scale == Scale::small) {
    s.model.rnn_layers = 3;  // 12.2M parameters instead of 256M: trainable on a CPU
    s.model.rnn_hidden = 512;
    s.min_seconds = 1.0;
    s.max_seconds = 4.0;
  } else if (scale == Scale::tiny) {
    s.model.conv_channels = 8;
    s.model.rnn_layers = 2;
    s.model.rnn_hidden = 32;
    s.min_seconds = 0.2;
    s.max_seconds = 0.5;
  }
  return s;
}

constexpr double kPi = 3.14159265358979323846;
constexpr double kCharactersPerSecond = 14.0;  // LibriSpeech's read speech, roughly

class DeepSpeech2 final : public Recipe<nn::DeepSpeech2> {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo info{
        .name = "deepspeech2",
        .domain = "speech recognition",
        .model = "Deep Speech 2: 2 conv + 7 bidirectional GRU x 1760, CTC over 29 characters (Amodei et al. 2016)",
        .dataset =
            "LibriSpeech-like: synthetic audio, or a LibriSpeech-style folder (--data DIR: *.trans.txt, "
            "FLAC/WAV at 16 kHz)",
        .sample_unit = "utterances",
        .default_batch = 8,
        .settings = {real_setting("lr", 3e-4, 0.0, 1e6, "SGD learning rate"),
                     real_setting("momentum", 0.9, 0.0, 1.0, "Nesterov momentum"),
                     real_setting("max_grad_norm", 400.0, 0.0, 1e12, "clip the gradient norm to this (0: no clipping)"),
                     integer_setting("length_bucket", 32, 1, 100000,
                                     "pad each batch's frames up to a multiple of this (10 ms each; length "
                                     "bucketing: few shapes; 1: exact lengths)")},
        .variable_shapes = true};
    return info;
  }

  int64_t full_scale_parameters(const Settings&) const override {
    return nn::deepspeech2_parameters(config_for(Scale::full).model);  // closed form: 256M, 1 GB
  }

  void setup(const RunOptions& options, const Settings& settings, torch::Device device) override {
    device_ = device;
    scale_ = config_for(options.scale);
    max_gradient_norm_ = settings.real("max_grad_norm");
    frame_multiple_ = settings.integer("length_bucket");
    if (!options.data_path.empty()) {
      auto folder = std::make_shared<const LibriSpeechFolder>(options.data_path);
      // One order shared by all ranks (options.seed); each rank reads its own batches of it.
      batches_ =
          read_dataset<LibriSpeechBatches>(device, folder, options.batch_size, options.seed, options.data_workers,
                                           Shard{options.rank, options.world_size}, frame_multiple_);
    } else {
      batches_ = BatchSource(synthetic_batches(options.batch_size, options.data_seed()));
    }
    place(nn::DeepSpeech2(scale_.model), device);
    optimizer_ =
        make_sgd(model_->parameters(),
                 torch::optim::SGDOptions(settings.real("lr")).momentum(settings.real("momentum")).nesterov(true),
                 options.optimizer_impl);
  }

  Batch next_batch() override {
    Batch batch = Recipe::next_batch();
    audio_seconds_ += batch.audio_seconds;
    utterances_ += batch.samples;
    return batch;
  }

  LossAndOutputs compute_loss(const Batch& batch) override {
    namespace F = torch::nn::functional;
    auto [log_probs, out_lengths] = model_->forward(batch.inputs[0], batch.inputs[1]);
    // Summed over the batch then divided by its size, as deepspeech.pytorch;
    // an impossible alignment counts zero instead of poisoning the step.
    const auto loss = F::ctc_loss(log_probs.to(torch::kFloat), batch.targets[0], out_lengths, batch.targets[1],
                                  F::CTCLossFuncOptions().reduction(torch::kSum).zero_infinity(true)) /
                      static_cast<double>(batch.samples);
    return {loss, {log_probs, out_lengths}};
  }

  // Audio seconds per second = samples_per_s × audio_seconds_per_utterance
  // (the mean over every batch handed out in this run).
  nlohmann::json configuration() const override {
    return {{"frequency_bins", scale_.model.frequency_bins},
            {"rnn_layers", scale_.model.rnn_layers},
            {"rnn_hidden", scale_.model.rnn_hidden},
            {"conv_channels", scale_.model.conv_channels},
            {"classes", scale_.model.classes},
            {"audio_seconds_per_utterance", utterances_ > 0 ? audio_seconds_ / static_cast<double>(utterances_) : 0.0}};
  }

 private:
  // Audio-like waveforms put through the same spectrogram as real audio: a
  // voiced source (a slowly gliding 100–250 Hz pitch with five decaying
  // harmonics) under a 4 Hz syllable envelope, plus noise; durations spread
  // uniformly over the scale's range; transcripts of random characters at
  // about 14 per second.
  BatchPool synthetic_batches(int64_t batch_size, uint64_t seed) const {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(seed, 0xa0d10));
    auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * torch::rand({1}, gen).item<double>(); };
    return synthetic_pool([&] {
      std::vector<torch::Tensor> spectrograms;
      std::vector<std::vector<int64_t>> transcripts;
      double seconds = 0;
      for (int64_t u = 0; u < batch_size; ++u) {
        const double duration = uniform(scale_.min_seconds, scale_.max_seconds);
        const int64_t n = static_cast<int64_t>(duration * kSpeechSampleRate);
        seconds += static_cast<double>(n) / kSpeechSampleRate;
        auto t = torch::arange(n, torch::kDouble) / static_cast<double>(kSpeechSampleRate);
        auto pitch = uniform(100, 250) * (1 + 0.05 * torch::sin(2 * kPi * 0.5 * t));
        auto phase = 2 * kPi * torch::cumsum(pitch, 0) / static_cast<double>(kSpeechSampleRate);
        auto wave = torch::zeros({n}, torch::kDouble);
        for (int h = 1; h <= 5; ++h) wave += torch::sin(h * phase) / h;
        auto envelope = 0.5 * (1 + torch::sin(2 * kPi * 4.0 * t + uniform(0, 2 * kPi)));
        wave = wave * envelope + 0.01 * torch::randn({n}, gen, torch::kDouble);
        spectrograms.push_back(log_spectrogram(wave.to(torch::kFloat)));
        const int64_t chars = std::max<int64_t>(1, std::lround(duration * kCharactersPerSecond));
        auto ids = torch::randint(1, scale_.model.classes, {chars}, gen, torch::kInt64);
        transcripts.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + chars);
      }
      return to_training_batch(collate_speech(spectrograms, transcripts, seconds, frame_multiple_), device_);
    });
  }

  ScaleConfig scale_;
  int64_t frame_multiple_ = 1;
  double audio_seconds_ = 0;
  int64_t utterances_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_deepspeech2() { return std::make_unique<DeepSpeech2>(); }

}  // namespace tbd
