#include "tbd/measure/trace_probe.h"

#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "tbd/core/error.h"

namespace tbd {
namespace {
namespace fs = std::filesystem;
namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> activities(c10::Device device) {
  std::set<ActivityType> a{ActivityType::CPU};
  if (device.is_cuda()) a.insert(ActivityType::CUDA);
  return a;
}

ProfilerConfig config() { return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/true); }

std::vector<DeviceActivity> device_activities_of(const std::vector<prof::KinetoEvent>& events) {
  using K = libkineto::ActivityType;
  std::vector<DeviceActivity> out;
  for (const auto& e : events) {
    if (e.deviceType() == c10::DeviceType::CPU) continue;
    DeviceActivity a;
    const auto type = static_cast<K>(e.activityType());
    if (type == K::CONCURRENT_KERNEL) a.kind = DeviceActivity::Kind::kernel;
    else if (type == K::GPU_MEMCPY) a.kind = DeviceActivity::Kind::memcpy;
    else if (type == K::GPU_MEMSET) a.kind = DeviceActivity::Kind::memset;
    else continue;
    a.name = e.name();
    a.start_ns = e.startNs();
    a.end_ns = e.endNs();
    out.push_back(std::move(a));
  }
  return out;
}

// A complete JSON document ends with '}' or ']' (whitespace aside).
bool ends_like_json(const std::string& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return false;
  std::streamoff pos = in.tellg();
  while (pos > 0) {
    in.seekg(--pos);
    const int c = in.get();
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '}' || c == ']';
  }
  return false;
}

// Why a write came out short, when the file system says: most often a full disk.
std::string space_note(const std::string& file) {
  const fs::path p(file);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  struct statvfs st{};
  if (statvfs(dir.c_str(), &st) == 0 && st.f_bavail == 0)
    return std::string(" (") + std::strerror(ENOSPC) + ": " + dir.string() + " is full)";
  return " (the disk may be full or failing)";
}

}  // namespace

void check_trace_path(const std::string& path) {
  if (path.empty()) throw UsageError("--trace needs a file name");
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError("--trace " + path + " is a directory; give a file name");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("--trace " + path + ": directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError("--trace " + path + ": directory " + dir.string() + " is not writable");
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0)
    throw UsageError("--trace " + path + ": the file exists and is not writable");
}

TraceRecorder::TraceRecorder(std::string path, c10::Device device) : path_(std::move(path)), device_(device) {}

TraceRecorder::~TraceRecorder() {
  if (running_) {
    try {
      prof::disableProfiler();
    } catch (...) {
      // nothing sensible to do while unwinding
    }
  }
}

void TraceRecorder::start() {
  prof::prepareProfiler(config(), activities(device_));
  prof::enableProfiler(config(), activities(device_));
  running_ = true;
}

nlohmann::json TraceRecorder::stop_and_save() {
  running_ = false;
  auto result = prof::disableProfiler();
  if (!result) throw Error("the Kineto profiler returned no result; no trace written");
  activities_ = device_activities_of(result->events());
  if (path_.empty()) return nullptr;
  // Kineto writes the file itself; write it beside the target and rename so
  // a failed export never leaves a half-written trace. Kineto does not report
  // a failed write, so the file is checked for its closing brace.
  const std::string tmp = path_ + ".tmp" + std::to_string(getpid());
  std::error_code ec;
  const auto fail = [&](const std::string& why) {
    fs::remove(tmp, ec);
    fs::remove(tmp + ".tmp", ec);  // Kineto's own temporary, left when its write fails
    throw Error("cannot write the trace " + path_ + ": " + why);
  };
  try {
    result->save(tmp);
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    fail(c10_error ? c10_error->what_without_backtrace() : e.what());
  }
  if (!fs::exists(tmp, ec)) fail("Kineto wrote no file" + space_note(path_));
  if (!ends_like_json(tmp)) fail("Kineto's file ends early" + space_note(path_));
  fs::rename(tmp, path_, ec);
  if (ec) fail(ec.message());
  return {{"file", path_}, {"bytes", static_cast<int64_t>(fs::file_size(path_, ec))},
          {"format", "Chrome trace JSON (Kineto export); opens in Perfetto and chrome://tracing"}};
}

}  // namespace tbd
