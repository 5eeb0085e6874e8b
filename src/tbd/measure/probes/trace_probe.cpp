#include "tbd/measure/probes/trace_probe.h"

#include <kineto/ActivityType.h>
#include <sys/statvfs.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "tbd/core/error.h"

// Declared in torch/csrc/profiler/kineto_shim.h, whose includes expect
// Kineto's source layout ("ActivityType.h") that LibTorch's include folder
// does not have; the function is exported by libtorch_cpu.
namespace torch::autograd::profiler {
TORCH_API void addMetadataJson(const std::string& key, const std::string& value);
}

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
    if (type == K::CONCURRENT_KERNEL)
      a.kind = DeviceActivity::Kind::kernel;
    else if (type == K::GPU_MEMCPY)
      a.kind = DeviceActivity::Kind::memcpy;
    else if (type == K::GPU_MEMSET)
      a.kind = DeviceActivity::Kind::memset;
    else
      continue;
    a.name = e.name();
    a.start_ns = e.startNs();
    a.end_ns = e.endNs();
    out.push_back(std::move(a));
  }
  return out;
}

// A flat object the way Python's json.dumps writes it ({"rank": 1, ...}), as
// torch.profiler records distributedInfo: HTA finds the rank with the
// pattern "rank":\s+N, which compact JSON ("rank":1) does not match.
std::string spaced_json(const nlohmann::json& object) {
  std::string text = "{";
  for (const auto& [key, value] : object.items())
    text += (text.size() > 1 ? ", " : "") + nlohmann::json(key).dump() + ": " + value.dump();
  return text + "}";
}

// Kineto names the trace after the file it wrote (`traceName`): the
// temporary. Tools show that name; give them the file's real one.
// False when the file could not be rewritten (a full disk).
bool name_trace(const std::string& tmp, const std::string& final_path) {
  std::string text;
  {
    std::ifstream in(tmp, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "\"traceName\": " + nlohmann::json(tmp).dump();
  const auto at = text.find(from);
  if (at == std::string::npos) return true;
  text.replace(at, from.size(), "\"traceName\": " + nlohmann::json(final_path).dump());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

}  // namespace

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

std::string space_note(const std::string& file) {
  const fs::path p(file);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) == 0 && st.f_bavail == 0)
    return std::string(" (") + std::strerror(ENOSPC) + ": " + dir.string() + " is full)";
  return " (the disk may be full or failing)";
}

void check_trace_path(const std::string& path, bool per_rank, const std::string& option) {
  if (path.empty()) throw UsageError(option + " needs a file name");
  const fs::path p(path);
  std::error_code ec;
  if (per_rank) {
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
      throw UsageError(option + " " + path +
                       " is a file, but a data-parallel run writes one trace per rank into a "
                       "folder (rank-0.json, rank-1.json, ...); give a folder name");
    const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (!fs::is_directory(p, ec) && !fs::is_directory(parent, ec))
      throw UsageError(option + " " + path + ": folder " + parent.string() + " does not exist");
    return;
  }
  if (fs::is_directory(p, ec)) throw UsageError(option + " " + path + " is a directory; give a file name");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + " " + path + ": directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(option + " " + path + ": directory " + dir.string() + " is not writable");
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0)
    throw UsageError(option + " " + path + ": the file exists and is not writable");
}

std::string trace_file_for_rank(const std::string& path, int rank, int world_size) {
  if (world_size <= 1 || path.empty()) return path;
  return (fs::path(path) / ("rank-" + std::to_string(rank) + ".json")).string();
}

std::string profiler_step_name(int step) { return "ProfilerStep#" + std::to_string(step); }

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
  if (!distributed_info_.is_null()) prof::addMetadataJson("distributedInfo", spaced_json(distributed_info_));
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
    fail(error_message(e));
  }
  if (!fs::exists(tmp, ec)) fail("Kineto wrote no file" + space_note(path_));
  if (!ends_like_json(tmp)) fail("Kineto's file ends early" + space_note(path_));
  if (!name_trace(tmp, path_)) fail(std::string(std::strerror(errno)) + space_note(path_));
  fs::rename(tmp, path_, ec);
  if (ec) fail(ec.message());
  return {{"file", path_},
          {"bytes", static_cast<int64_t>(fs::file_size(path_, ec))},
          {"format", "Chrome trace JSON (Kineto export); opens in Perfetto and chrome://tracing"}};
}

}  // namespace tbd
