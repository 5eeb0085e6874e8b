#include "tbd/data/spectrogram.h"

#include <string>

#include "tbd/core/error.h"

namespace tbd {

torch::Tensor log_spectrogram(const torch::Tensor& samples, const std::string& what) {
  if (samples.dim() != 1 || samples.size(0) < kSpectrogramWindow)
    throw Error(what + ": " + std::to_string(samples.numel()) + " samples is shorter than one " + "20 ms window (" +
                std::to_string(kSpectrogramWindow) + " samples at 16 kHz)");
  const auto window = torch::hamming_window(kSpectrogramWindow, torch::kFloat);
  // center=true pads by reflection, so frame k is centred on sample k·hop.
  auto spec = torch::stft(samples.to(torch::kFloat), kSpectrogramWindow, kSpectrogramHop, kSpectrogramWindow, window,
                          /*center=*/true, "reflect",
                          /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);
  auto features = torch::log1p(spec.abs());
  const auto mean = features.mean();
  const auto spread = features.std();
  return (features - mean) / (spread + 1e-10);
}

}  // namespace tbd
