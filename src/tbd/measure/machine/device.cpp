#include "tbd/measure/machine/device.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"

namespace tbd {

c10::Device resolve_device(const std::string& text) {
  if (text == "cpu") return c10::Device(c10::kCPU);
  if (text.rfind("cuda", 0) != 0) throw UsageError("--device must be cpu, cuda or cuda:N, got '" + text + "'");
  int index = 0;
  if (text.size() > 4) {
    if (text[4] != ':' || text.size() == 5 || text.find_first_not_of("0123456789", 5) != std::string::npos)
      throw UsageError("--device must be cpu, cuda or cuda:N, got '" + text + "'");
    const auto n = integer_from_text(text.substr(5));
    if (!n || *n > 1 << 20) throw UsageError("--device must be cpu, cuda or cuda:N, got '" + text + "'");
    index = static_cast<int>(*n);
  }
  if (!torch::cuda::is_available()) {
#ifdef TBD_WITH_CUDA
    throw UsageError("--device " + text +
                     ": no CUDA device is available (this CUDA build found no GPU or no "
                     "NVIDIA driver); use --device cpu, or run on a machine with a GPU");
#else
    throw UsageError("--device " + text +
                     ": no CUDA device is available (this tbd is built against a CPU "
                     "LibTorch); use --device cpu, or build against a CUDA LibTorch (docs/gpu.md)");
#endif
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    throw UsageError("--device " + text + ": only " + std::to_string(count) +
                     " CUDA device(s) visible (cuda:0 .. cuda:" + std::to_string(count - 1) + ")");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string device_for_rank(const std::string& text, int local_rank) {
  if (text == "cuda" && local_rank >= 0) return "cuda:" + std::to_string(local_rank);
  return text;
}

void make_current(c10::Device device) {
  if (device.is_cuda()) c10::impl::getDeviceGuardImpl(device.type())->setDevice(device);
}

void synchronize(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

namespace {
c10::Stream current_stream(c10::Device device) {
  return c10::impl::getDeviceGuardImpl(device.type())->getStream(device);
}
}  // namespace

DeviceTimer::DeviceTimer(c10::Device device) : device_(device) {
  if (!device_.is_cuda()) return;
  // BACKEND_DEFAULT: a CUDA event with timing (PyTorch's default disables it).
  begin_.emplace(device_.type(), c10::EventFlag::BACKEND_DEFAULT);
  end_.emplace(device_.type(), c10::EventFlag::BACKEND_DEFAULT);
}

void DeviceTimer::start() {
  if (begin_) begin_->record(current_stream(device_));
}

void DeviceTimer::stop() {
  if (end_) end_->record(current_stream(device_));
}

std::optional<double> DeviceTimer::seconds() const {
  if (!begin_ || !end_ || !begin_->was_marked_for_recording() || !end_->was_marked_for_recording()) return std::nullopt;
  return begin_->elapsedTime(*end_) / 1e3;  // milliseconds
}

}  // namespace tbd
