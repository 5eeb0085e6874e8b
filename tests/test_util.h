// Helpers shared by the test suites: temporary folders and error capture.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tbd/measure/runner.h"
#include "tbd/workloads/registry.h"

namespace tbd::testing {

// A fresh folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tbd-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The message of the exception of type E that `fn` throws; fails the test
// (and returns "") when it throws nothing or something else.
template <class E>
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "threw nothing";
  return "";
}

// ResNet-50 at tiny scale, quiet, one repetition of `iters` after `warmup`:
// the small real run many suites measure. Callers set what their test is about.
inline RunOptions tiny_resnet(int64_t batch_size = 4, int iters = 2, int warmup = 1) {
  RunOptions o;
  o.workload = "resnet50";
  o.scale = Scale::tiny;
  o.batch_size = batch_size;
  o.iters = iters;
  o.warmup = warmup;
  o.repeat = 1;
  o.quiet = true;
  return o;
}

// A benchmark of the registry's workload options.workload, made here as the
// CLI makes it (the runner itself takes a Workload and knows no names).
inline RunOutcome run_registered(const RunOptions& options, const std::vector<std::string>& probes,
                                 const TraceRequest& trace = {}) {
  const auto workload = create_workload(options.workload);
  return run_benchmark(options, *workload, probes, trace);
}

}  // namespace tbd::testing
