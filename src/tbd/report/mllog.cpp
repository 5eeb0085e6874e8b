#include "tbd/report/mllog.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "tbd/core/error.h"

namespace tbd {

int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

// JSON as Python's json.dumps writes it by default (", " and ": "
// separators), which is what mlperf-logging emits and its checkers expect.
template <class Json>
std::string python_style(const Json& j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += (first ? "" : ", ") + Json(it.key()).dump() + ": " + python_style(it.value());
      first = false;
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + python_style(j[i]);
    return out + "]";
  }
  return j.dump();
}

}  // namespace

std::string mllog_line(int64_t time_ms, const std::string& event_type, const std::string& key,
                       const nlohmann::json& value, const nlohmann::json& metadata) {
  // Keys in mlperf-logging's order (ordered_json keeps insertion order).
  nlohmann::ordered_json event;
  event["namespace"] = "";
  event["time_ms"] = time_ms;
  event["event_type"] = event_type;
  event["key"] = key;
  event["value"] = nlohmann::ordered_json::parse(value.dump());
  event["metadata"] = nlohmann::ordered_json::parse(metadata.dump());
  return ":::MLLOG " + python_style(event);
}

void check_log_path(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError(option + " needs a file name");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(option + " " + path + " is a folder; give a file name");
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + " " + path + ": folder " + dir.string() + " does not exist; create it first");
}

void append_to_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot append to " + path + ": " + std::strerror(errno));
  // One write() with O_APPEND: lines of concurrent writers do not interleave.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error("cannot append to " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

void append_mllog(const std::string& path, const nlohmann::json& r, int64_t start_ms, int64_t stop_ms) {
  const auto& w = r.at("workload");
  const auto& o = w.at("options");
  std::string text;
  // metadata as mlperf-logging writes it: the source file and line that logged the event.
  const auto add = [&](int64_t t, const char* type, const char* key, const nlohmann::json& value, int line,
                       nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json metadata = {{"file", "src/tbd/report/mllog.cpp"}, {"lineno", line}};
    metadata.update(extra);
    text += mllog_line(t, type, key, value, metadata) + "\n";
  };
  const int world = o.contains("world_size") ? o["world_size"].get<int>() : 1;
  std::string platform = "unknown";
  if (r.contains("environment") && r["environment"].contains("cpu") && r["environment"]["cpu"].contains("model") &&
      r["environment"]["cpu"]["model"].is_string())
    platform = r["environment"]["cpu"]["model"].get<std::string>();
  if (o.value("device", "cpu") != "cpu") platform = o.value("device", "") + " (host: " + platform + ")";
  add(start_ms, "INTERVAL_START", "run_start", nullptr, __LINE__);
  add(start_ms, "POINT_IN_TIME", "submission_benchmark", w.at("name"), __LINE__);
  add(start_ms, "POINT_IN_TIME", "submission_platform", platform, __LINE__);
  add(start_ms, "POINT_IN_TIME", "seed", o.value("seed", 0ULL), __LINE__);
  add(start_ms, "POINT_IN_TIME", "global_batch_size", o.value("batch_size", 0LL) * world, __LINE__);
  if (w.contains("settings") && w["settings"].contains("lr")) {
    const auto& lr = w["settings"]["lr"];
    try {
      add(start_ms, "POINT_IN_TIME", "opt_base_learning_rate", lr.is_string() ? std::stod(lr.get<std::string>()) : lr.get<double>(),
          __LINE__);
    } catch (const std::exception&) {
    }
  }
  const auto& t = r.at("throughput");
  nlohmann::json stats = {{"throughput", t.contains("samples_per_s") ? t["samples_per_s"] : nlohmann::json(nullptr)},
                          {"throughput_unit", t.value("unit", "")}};
  if (r.contains("summary") && r["summary"].contains("median_s")) stats["median_iteration_s"] = r["summary"]["median_s"];
  const auto iterations = r.at("iterations").size();
  add(stop_ms, "POINT_IN_TIME", "tracked_stats", stats, __LINE__, {{"step", iterations}});
  add(stop_ms, "INTERVAL_END", "run_stop", nullptr, __LINE__,
      {{"status", r.value("partial", false) ? "aborted" : "success"}});
  append_to_file(path, text);
}

}  // namespace tbd
