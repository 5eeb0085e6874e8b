// trace: a Chrome/Perfetto trace of a few iterations through the Kineto
// profiler's own export (docs/metrics.md#trace). The runner records them
// after the measured window, so profiler overhead never enters a statistic.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "tbd/measure/ops/kernel_summary.h"

namespace tbd {

// Throws UsageError, naming `option` (--trace, --execution-trace), when a
// trace cannot be written to `path` (missing or unwritable directory, a
// directory given as the file). A data-parallel run (`per_rank`) writes one
// trace per rank into the folder `path` (made when missing), as Holistic
// Trace Analysis reads them: then `path` must not be a file.
void check_trace_path(const std::string& path, bool per_rank = false, const std::string& option = "--trace");

// Checks of a trace file another library wrote (Kineto, the execution-trace
// observer), neither of which reports a failed write: whether it ends as a
// complete JSON document does ('}' or ']', whitespace aside), and, when it
// does not, the likely cause (" (No space left on device: DIR is full)").
bool ends_like_json(const std::string& file);
std::string space_note(const std::string& file);

// The file rank `rank` writes for --trace `path`: `path` itself in a
// single-process run, `path`/rank-RANK.json in a data-parallel one.
std::string trace_file_for_rank(const std::string& path, int rank, int world_size);

// The range HTA and PyTorch's profiler mark each profiled iteration with.
std::string profiler_step_name(int step);

// Kineto profiler on the current thread (and the threads LibTorch hands its
// state to), CPU activities plus CUDA kernels in CUDA runs.
class TraceRecorder {
 public:
  // An empty path profiles without writing a file (for the kernel summary).
  TraceRecorder(std::string path, c10::Device device);
  ~TraceRecorder();  // stops a running profiler without saving
  void start();
  // Recorded in the trace as `distributedInfo` (rank, world_size, backend),
  // as PyTorch's profiler records it, so HTA can tell the ranks apart.
  void set_distributed_info(nlohmann::json info) { distributed_info_ = std::move(info); }
  // Stops; writes the trace when a path was given and returns {file, bytes,
  // format}, else null. Keeps the device's kernel and copy activities.
  nlohmann::json stop_and_save();
  const std::vector<DeviceActivity>& device_activities() const { return activities_; }

 private:
  std::string path_;
  c10::Device device_;
  bool running_ = false;
  nlohmann::json distributed_info_;
  std::vector<DeviceActivity> activities_;
};

}  // namespace tbd
