#include "tbd/measure/probes/execution_trace.h"

#include <torch/csrc/profiler/standalone/execution_trace_observer.h>
#include <unistd.h>

#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/measure/probes/trace_probe.h"

namespace tbd {
namespace fs = std::filesystem;
namespace et = torch::profiler::impl;

ExecutionTraceRecorder::ExecutionTraceRecorder(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp" + std::to_string(getpid())) {
  if (!et::addExecutionTraceObserver(tmp_))
    throw Error("cannot record the execution trace " + path_ + ": LibTorch's observer could not open " + tmp_);
  registered_ = true;
}

ExecutionTraceRecorder::~ExecutionTraceRecorder() {
  if (!registered_) return;
  try {
    et::disableExecutionTraceObserver();
    et::removeExecutionTraceObserver();
  } catch (...) {
    // nothing sensible to do while unwinding
  }
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void ExecutionTraceRecorder::start() { et::enableExecutionTraceObserver(); }

nlohmann::json ExecutionTraceRecorder::stop_and_save() {
  et::disableExecutionTraceObserver();
  et::removeExecutionTraceObserver();  // writes the end of the file
  registered_ = false;
  std::error_code ec;
  if (!ends_like_json(tmp_)) {
    fs::remove(tmp_, ec);
    throw Error("cannot write the execution trace " + path_ + ": the file ends early" + space_note(path_));
  }
  fs::rename(tmp_, path_, ec);
  if (ec) {
    fs::remove(tmp_, ec);
    throw Error("cannot write the execution trace " + path_ + ": " + ec.message());
  }
  return {{"file", path_},
          {"bytes", static_cast<int64_t>(fs::file_size(path_, ec))},
          {"format", "PyTorch execution trace JSON (ExecutionTraceObserver); Chakra's chakra_converter reads it"}};
}

}  // namespace tbd
