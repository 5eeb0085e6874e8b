// Device selection and synchronisation, shared by every device-aware piece.
#pragma once

#include <string>

#include <c10/core/Device.h>

namespace tbd {

// "cpu", "cuda", "cuda:N"; throws UsageError when the device is not there.
c10::Device resolve_device(const std::string& text);

// Waits for all queued work on the device (no-op on the CPU).
void synchronize(c10::Device device);

}  // namespace tbd
