// execution trace: PyTorch's execution trace (the operator graph with
// inputs, outputs and their tensor ids, schema "1.1.1-chakra.0.0.4" on
// LibTorch 2.x) of the profiled iterations, through LibTorch's own
// ExecutionTraceObserver, as torch.profiler.ExecutionTraceObserver writes it
// in Python. MLCommons Chakra converts it for simulators such as ASTRA-sim
// (docs/analysis.md#execution-traces). Recorded while the Kineto trace runs,
// its nodes carry the record-function ids (`rf_id`) that link them to the
// Kineto trace's operators.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

class ExecutionTraceRecorder {
 public:
  // Registers the observer, writing to a temporary beside `path`; throws
  // Error when LibTorch refuses (a file it cannot open).
  explicit ExecutionTraceRecorder(std::string path);
  ~ExecutionTraceRecorder();  // unregisters without keeping a file
  void start();
  // Stops, finishes the file and renames it to `path`: {file, bytes, format}.
  // Throws Error (the temporary removed) when the file is incomplete.
  nlohmann::json stop_and_save();

 private:
  std::string path_, tmp_;
  bool registered_ = false;
};

}  // namespace tbd
