// Deep Speech 2's input features: the log-magnitude spectrogram of 16 kHz
// audio with a 20 ms Hamming window and a 10 ms hop (320-point FFT, 161
// bins), log(1 + |STFT|), normalised per utterance to zero mean and unit
// variance, as deepspeech.pytorch computes it.
#pragma once

#include <cstdint>
#include <string>

#include <torch/types.h>

namespace tbd {

constexpr int64_t kSpeechSampleRate = 16000;
constexpr int64_t kSpectrogramWindow = 320;                       // 20 ms
constexpr int64_t kSpectrogramHop = 160;                          // 10 ms
constexpr int64_t kSpectrogramBins = kSpectrogramWindow / 2 + 1;  // 161

// samples: [N] float, N >= kSpectrogramWindow -> [161, N / 160 + 1] float.
// Throws Error (naming `what`) for audio shorter than one window.
torch::Tensor log_spectrogram(const torch::Tensor& samples, const std::string& what = "audio");

}  // namespace tbd
