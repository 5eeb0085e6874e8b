// Device selection and synchronisation, shared by every device-aware piece.
#pragma once

#include <optional>
#include <string>

#include <c10/core/Device.h>
#include <c10/core/Event.h>

namespace tbd {

// "cpu", "cuda", "cuda:N"; throws UsageError when the device is not there.
c10::Device resolve_device(const std::string& text);

// In a distributed run (local_rank >= 0) plain "cuda" means this rank's own
// GPU, cuda:LOCAL_RANK, one process per GPU as torchrun places them; any
// other text is kept as given.
std::string device_for_rank(const std::string& text, int local_rank);

// Makes a CUDA device the thread's current one (kernels, NCCL, the caching
// allocator follow it); no-op on the CPU.
void make_current(c10::Device device);

// Waits for all queued work on the device (no-op on the CPU).
void synchronize(c10::Device device);

// Device-side time of the work queued between start() and stop() on the
// device's current stream: CUDA events (c10::Event, so no CUDA headers here).
// On the CPU it measures nothing and seconds() is empty.
class DeviceTimer {
 public:
  explicit DeviceTimer(c10::Device device);
  void start();
  void stop();
  // Seconds between the two events; call after synchronize(). Empty on the CPU.
  std::optional<double> seconds() const;

 private:
  c10::Device device_;
  std::optional<c10::Event> begin_, end_;
};

}  // namespace tbd
