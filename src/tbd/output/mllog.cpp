#include "tbd/output/mllog.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "tbd/core/error.h"

namespace tbd {

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
  // Created here (O_EXCL tells), the file is removed again when the write
  // fails (a full disk): no 0-byte log is left behind.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw Error("cannot append to " + path + ": " + std::strerror(errno));
  // One write() with O_APPEND: lines of concurrent writers do not interleave.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      if (created) ::unlink(path.c_str());
      throw Error("cannot append to " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

std::string mlperf_benchmark_name(const std::string& workload) {
  // MLPerf Training's names for the same published models (training rules
  // 0.7.0, the last round that ran all four); the others keep tbd's name.
  static const std::map<std::string, std::string> names = {
      {"resnet50", "resnet"}, {"transformer", "transformer"}, {"seq2seq", "gnmt"}, {"dlrm", "dlrm"}};
  const auto it = names.find(workload);
  return it == names.end() ? workload : it->second;
}

namespace {

// MLPerf's names for the lowest precision in a layer type.
std::string mlperf_precision(const std::string& precision) {
  if (precision == "bf16") return "bfloat16";
  return precision;  // fp32, tf32, fp16
}

// The command line that makes this configuration again, for config_filename.
std::string configuration_line(const nlohmann::json& w, const nlohmann::json& o) {
  std::string line = "tbd run " + w.at("name").get<std::string>();
  for (const char* key :
       {"scale", "batch_size", "grad_accum", "precision", "device", "optimizer_impl", "memory_format"})
    if (o.contains(key) && !o[key].is_null()) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      line += " --" + flag + " " + (o[key].is_string() ? o[key].get<std::string>() : o[key].dump());
    }
  return line;
}

}  // namespace

void append_mllog(const std::string& path, const nlohmann::json& r) {
  const auto& w = r.at("workload");
  const auto& o = w.at("options");
  if (!r.contains("wall_clock") || !r["wall_clock"].is_object())
    throw Error("the result has no wall_clock section, which --mllog needs for its event times");
  const auto& clock = r["wall_clock"];
  const int64_t start = clock.at("start"), setup_end = clock.at("setup_end"), end = clock.at("end");
  std::string text;
  // metadata as mlperf-logging writes it: the source file and line that logged the event.
  const auto add = [&](int64_t t, const char* type, const char* key, const nlohmann::json& value, int line,
                       nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json metadata = {{"file", "src/tbd/output/mllog.cpp"}, {"lineno", line}};
    metadata.update(extra);
    text += mllog_line(t, type, key, value, metadata) + "\n";
  };
  const auto point = [&](const char* key, const nlohmann::json& value, int line) {
    add(start, "POINT_IN_TIME", key, value, line);
  };
  const int world = o.contains("world_size") ? o["world_size"].get<int>() : 1;
  const int64_t batch = o.value("batch_size", 0LL);
  std::string platform = "unknown";
  if (r.contains("environment") && r["environment"].contains("cpu") && r["environment"]["cpu"].contains("model") &&
      r["environment"]["cpu"]["model"].is_string())
    platform = r["environment"]["cpu"]["model"].get<std::string>();
  if (o.value("device", "cpu") != "cpu") platform = o.value("device", "") + " (host: " + platform + ")";
  const std::string precision = mlperf_precision(o.value("precision", "fp32"));

  // Initialisation: the submission's description and the hyperparameters
  // (docs/analysis.md#mlperf-logs says what each value means for tbd).
  add(start, "POINT_IN_TIME", "cache_clear", false, __LINE__,
      {{"note", "tbd does not drop the operating system's caches before a run"}});
  add(start, "INTERVAL_START", "init_start", nullptr, __LINE__);
  point("submission_org", "tbd", __LINE__);
  point("submission_platform", platform, __LINE__);
  point("submission_division", "open", __LINE__);
  point("submission_status", "research", __LINE__);
  point("submission_benchmark", mlperf_benchmark_name(w.at("name").get<std::string>()), __LINE__);
  point("config_filename", configuration_line(w, o), __LINE__);
  point("seed", o.value("seed", 0ULL), __LINE__);
  const int64_t accumulation = o.value("grad_accum", int64_t{1});  // absent in results before --grad-accum
  point("global_batch_size", batch * accumulation * world, __LINE__);
  point("micro_batch_size", batch, __LINE__);
  point("gradient_accumulation_steps", accumulation, __LINE__);
  point("lowest_numerical_precision_in_linear", precision, __LINE__);
  point("lowest_numerical_precision_in_attn", precision, __LINE__);
  // Data-parallel gradients are all-reduced in the parameters' dtype (fp32).
  point("lowest_numerical_precision_in_comm", "fp32", __LINE__);
  point("tensor_parallelism", 1, __LINE__);
  point("pipeline_parallelism", 1, __LINE__);
  point("context_parallelism", 1, __LINE__);
  point("expert_parallelism", 1, __LINE__);
  if (w.contains("settings") && w["settings"].contains("lr")) {
    const auto& lr = w["settings"]["lr"];
    try {
      point("opt_base_learning_rate", lr.is_string() ? std::stod(lr.get<std::string>()) : lr.get<double>(), __LINE__);
    } catch (const std::exception&) {
    }
  }
  const auto& t = r.at("throughput");
  point("train_samples", t.value("samples", 0.0), __LINE__);  // trained in the timed windows
  point("eval_samples", 0, __LINE__);                         // tbd runs no evaluation
  add(setup_end, "INTERVAL_END", "init_stop", nullptr, __LINE__);

  // The run: warm-up, then one block per timed repetition with its throughput.
  add(setup_end, "INTERVAL_START", "run_start", nullptr, __LINE__);
  const auto& windows = clock.at("windows");
  const auto& reps = t.contains("repetitions") ? t["repetitions"] : nlohmann::json::array();
  int64_t step = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    const int64_t a = windows[i].at("start"), b = windows[i].at("end");
    const int number = static_cast<int>(i) + 1;
    const nlohmann::json rep = i < reps.size() ? reps[i] : nlohmann::json::object();
    add(a, "INTERVAL_START", "block_start", nullptr, __LINE__,
        {{"first_epoch_num", number}, {"epoch_count", 1}, {"samples_count", rep.value("samples", 0.0)}});
    step += rep.value("iterations", 0LL);
    nlohmann::json stats = {
        {"throughput", rep.contains("samples_per_s") ? rep["samples_per_s"] : nlohmann::json(nullptr)},
        {"throughput_unit", t.value("unit", "")},
        {"seconds", rep.value("seconds", 0.0)}};
    add(b, "POINT_IN_TIME", "tracked_stats", stats, __LINE__, {{"step", step}, {"epoch_num", number}});
    add(b, "INTERVAL_END", "block_stop", nullptr, __LINE__, {{"first_epoch_num", number}});
  }
  add(end, "INTERVAL_END", "run_stop", nullptr, __LINE__,
      {{"status", r.value("partial", false) ? "aborted" : "success"}});
  append_to_file(path, text);
}

}  // namespace tbd
