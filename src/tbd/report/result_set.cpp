#include "tbd/report/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/report/json_fields.h"

namespace tbd {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_json(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(file + ": cannot be read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond double's range
    throw Error(file + ": not valid JSON (" + std::string(e.what()) +
                "); was it truncated? Re-run the benchmark that wrote it, or remove the file");
  }
}

// What report and compare read from a document, by JSON type. A field that
// is present with another type (a string where a number belongs, null, ...)
// is refused here, naming the file and the field, instead of failing later
// inside the JSON library.
enum class Kind { string, integer, number, boolean, object, array };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::string: return "a string";
    case Kind::integer: return "an integer";
    case Kind::number: return "a number";
    case Kind::boolean: return "true or false";
    case Kind::object: return "an object";
    case Kind::array: return "an array";
  }
  return "?";
}

bool has_kind(const nlohmann::json& j, Kind k) {
  switch (k) {
    case Kind::string: return j.is_string();
    case Kind::integer: return j.is_number_integer();
    case Kind::number: return j.is_number();
    case Kind::boolean: return j.is_boolean();
    case Kind::object: return j.is_object();
    case Kind::array: return j.is_array();
  }
  return false;
}

std::string found_text(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text + " (" +
         (j.is_string()    ? "a string"
          : j.is_boolean() ? "a boolean"
          : j.is_number()  ? "a number"
          : j.is_array()   ? "an array"
                           : "an object") +
         ")";
}

[[noreturn]] void wrong_type(const std::string& file, const std::string& field, Kind k, const nlohmann::json& found) {
  throw Error(file + ": field '" + field + "' must be " + kind_name(k) + ", found " + found_text(found) +
              "; the file was edited by hand or written by another program: correct the field or remove the file");
}

// `parent[key]`, when present, must be of kind `k`; `where` is the parent's path ("workload.options").
void expect_kind(const nlohmann::json& parent, const char* key, Kind k, const std::string& file,
                 const std::string& where) {
  if (!parent.is_object()) return;
  const auto it = parent.find(key);
  if (it != parent.end() && !has_kind(*it, k)) wrong_type(file, where.empty() ? key : where + "." + key, k, *it);
}

// The fields of a result that report and compare read, where present.
void check_entries(const nlohmann::json& array, const std::string& file, const std::string& name,
                   std::initializer_list<std::pair<const char*, Kind>> fields);

void check_result_fields(const nlohmann::json& r, const std::string& file) {
  const auto& w = r["workload"];
  expect_kind(w, "settings", Kind::object, file, "workload");
  const auto& o = w["options"];
  for (const char* key : {"scale", "precision", "device", "data", "optimizer_impl", "host_allocator"})
    expect_kind(o, key, Kind::string, file, "workload.options");
  for (const char* key : {"batch_size", "world_size"}) expect_kind(o, key, Kind::integer, file, "workload.options");
  expect_kind(o, "settings", Kind::object, file, "workload.options");
  expect_kind(r, "partial", Kind::boolean, file, "");
  const auto& t = r["throughput"];
  expect_kind(t, "unit", Kind::string, file, "throughput");
  expect_kind(t, "repetitions", Kind::array, file, "throughput");
  if (t.contains("repetitions"))
    check_entries(t["repetitions"], file, "throughput.repetitions",
                  {{"samples", Kind::number}, {"seconds", Kind::number}});
  expect_kind(r, "distributed", Kind::object, file, "");
  if (r.contains("distributed"))
    expect_kind(r["distributed"], "global_samples_per_s", Kind::number, file, "distributed");
  expect_kind(r, "memory", Kind::object, file, "");
  if (r.contains("memory")) {
    const auto& m = r["memory"];
    expect_kind(m, "breakdown", Kind::object, file, "memory");
    if (m.contains("breakdown"))
      for (const auto& [category, bytes] : m["breakdown"].items())
        if (!bytes.is_number()) wrong_type(file, "memory.breakdown." + category, Kind::number, bytes);
    expect_kind(m, "cuda_allocator", Kind::object, file, "memory");
    if (m.contains("cuda_allocator"))
      expect_kind(m["cuda_allocator"], "reserved_peak_bytes", Kind::number, file, "memory.cuda_allocator");
  }
}

// Each entry of `array` must be an object whose listed keys, where present, have their kind.
void check_entries(const nlohmann::json& array, const std::string& file, const std::string& name,
                   std::initializer_list<std::pair<const char*, Kind>> fields) {
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string where = name + "[" + std::to_string(i) + "]";
    if (!array[i].is_object()) wrong_type(file, where, Kind::object, array[i]);
    for (const auto& [key, kind] : fields) expect_kind(array[i], key, kind, file, where);
  }
}

void validate_scale(const nlohmann::json& doc, const std::string& file) {
  if (!doc.contains("points") || !doc["points"].is_array())
    throw Error(file + ": tbd.scale/1 document lacks its 'points' array");
  expect_kind(doc, "workload", Kind::string, file, "");
  expect_kind(doc, "unit", Kind::string, file, "");
  check_entries(doc["points"], file, "points", {{"nproc", Kind::integer}});
  for (const auto& p : doc["points"]) {
    if (!p.contains("nproc") || !p.contains("result"))
      throw Error(file + ": a point of the tbd.scale/1 document lacks 'nproc' or 'result'");
    validate_result(p["result"], file + " (point nproc " + p["nproc"].dump() + ")");
  }
}

void add_file(ResultSet& set, const std::string& file, bool from_folder) {
  const nlohmann::json doc = read_json(file);
  const std::string schema =
      doc.is_object() && doc.contains("schema") && doc["schema"].is_string() ? doc["schema"].get<std::string>() : "";
  if (schema == kResultSchema) {
    validate_result(doc, file);
    set.runs.push_back({file, "", doc});
  } else if (schema == kScaleSchema) {
    validate_scale(doc, file);
    for (const auto& p : doc["points"]) set.runs.push_back({file, "scale, nproc " + p["nproc"].dump(), p["result"]});
    set.scales.push_back({file, doc});
  } else if (schema == kSweepSchema) {
    if (!doc.contains("points") || !doc["points"].is_array())
      throw Error(file + ": tbd.sweep/1 document lacks its 'points' array");
    expect_kind(doc, "workload", Kind::string, file, "");
    expect_kind(doc, "stopped_by", Kind::string, file, "");
    check_entries(doc["points"], file, "points",
                  {{"batch_size", Kind::integer}, {"status", Kind::string}, {"error", Kind::string}});
    set.sweeps.push_back({file, doc});
  } else if (schema == kSuiteSchema) {
    if (!doc.contains("runs") || !doc["runs"].is_array())
      throw Error(file + ": tbd.suite/1 document lacks its 'runs' array");
    check_entries(doc["runs"], file, "runs",
                  {{"workload", Kind::string}, {"status", Kind::string}, {"error", Kind::string}});
    set.suites.push_back({file, doc});
  } else if (schema == kPredictionSchema) {
    if (!doc.contains("predictions") || !doc["predictions"].is_array())
      throw Error(file + ": tbd.prediction/1 document lacks its 'predictions' array");
    expect_kind(doc, "base_label", Kind::string, file, "");
    set.predictions.push_back({file, doc});
  } else if (schema.rfind("tbd.", 0) == 0) {
    throw Error(file + ": unknown schema '" + schema + "'; this tbd reads " + kResultSchema + ", " + kScaleSchema +
                ", " + kSweepSchema + ", " + kSuiteSchema + " and " + kPredictionSchema +
                " (a newer tbd wrote it? use that version)");
  } else if (from_folder) {
    set.skipped.push_back(file);
  } else {
    throw Error(file +
                ": not a tbd file (no \"schema\": \"tbd.result/1\" or another tbd schema); "
                "give a file written by tbd run, sweep, scale or suite");
  }
}

std::string settings_text(const nlohmann::json& result) {
  static const nlohmann::json none = nlohmann::json::object();
  const auto& w = result["workload"];
  const auto& o = w["options"];
  const nlohmann::json& s = w.contains("settings") && w["settings"].is_object()   ? w["settings"]
                            : o.contains("settings") && o["settings"].is_object() ? o["settings"]
                                                                                  : none;
  std::string text;
  for (const auto& [k, v] : s.items())
    text += (text.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return text;
}

// Whether a convolutional workload ran channels-last (its configuration
// records the resolved --memory-format).
bool channels_last(const nlohmann::json& result) {
  const auto& w = result["workload"];
  if (!w.contains("configuration") || !w["configuration"].is_object()) return false;
  const auto& c = w["configuration"];
  return c.contains("memory_format") && c["memory_format"] == "channels_last";
}

int world_size_of(const nlohmann::json& result) {
  const auto& o = result["workload"]["options"];
  return o.contains("world_size") ? o["world_size"].get<int>() : 1;
}

std::string key(const nlohmann::json& r, bool with_batch) {
  const auto& o = r["workload"]["options"];
  std::ostringstream k;
  k << r["workload"]["name"].get<std::string>() << " scale=" << o.value("scale", "?");
  if (with_batch) k << " batch=" << o.value("batch_size", 0LL);
  // Part of the configuration, not of a sweep's batch axis; absent before --grad-accum existed.
  if (const long long accum = o.value("grad_accum", 1LL); accum > 1) k << " grad_accum=" << accum;
  // Results written before --optimizer-impl existed stepped with LibTorch's loop.
  k << " precision=" << o.value("precision", "?") << " optimizer=" << o.value("optimizer_impl", "loop")
    << " device=" << o.value("device", "?")
    << " data=" << (o.value("data", "synthetic") == "synthetic" ? "synthetic" : "real") << " settings=["
    << settings_text(r) << "] world=" << world_size_of(r);
  // Convolutional workloads record the layout they ran in; before
  // --memory-format existed every run was contiguous.
  if (channels_last(r)) k << " memory=channels_last";
  // Results written before --host-allocator existed ran on glibc's defaults
  // (what `system` keeps); only the retaining allocator marks the key.
  if (o.value("host_allocator", "system") == "retain") k << " host_allocator=retain";
  return k.str();
}

}  // namespace

void validate_result(const nlohmann::json& r, const std::string& file) {
  if (!r.is_object()) throw Error(file + ": a result must be a JSON object");
  if (r.value("schema", "") != kResultSchema)
    throw Error(file + ": expected schema " + kResultSchema + ", found " +
                (r.contains("schema") ? r["schema"].dump() : "none"));
  const auto require = [&](bool ok, const std::string& what) {
    if (!ok) throw Error(file + ": tbd.result/1 document lacks " + what + " (was it edited by hand or truncated?)");
  };
  require(r.contains("workload") && r["workload"].is_object() && r["workload"].contains("name") &&
              r["workload"]["name"].is_string(),
          "'workload.name'");
  require(r["workload"].contains("options") && r["workload"]["options"].is_object(), "'workload.options'");
  require(r.contains("iterations") && r["iterations"].is_array(), "the 'iterations' array");
  for (const auto& t : r["iterations"])
    if (!t.is_number() || !(t.get<double>() >= 0))
      throw Error(file + ": 'iterations' must hold non-negative seconds, found " + t.dump());
  require(r.contains("throughput") && r["throughput"].is_object(), "'throughput'");
  check_result_fields(r, file);
}

ResultSet load_results(const std::string& path) {
  ResultSet set;
  std::error_code ec;
  const auto symlink_loop = [](const std::string& p) {
    return Error(p +
                 ": a loop of symbolic links (the link points, through other links, back to itself); "
                 "remove the link or point it at a real file or folder");
  };
  const fs::file_status status = fs::status(path, ec);
  if (ec == std::errc::too_many_symbolic_link_levels) throw symlink_loop(path);
  if (fs::is_directory(status)) {
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->path().extension() != ".json") continue;
      std::error_code entry_ec;
      const bool regular = it->is_regular_file(entry_ec);
      if (entry_ec == std::errc::too_many_symbolic_link_levels) throw symlink_loop(it->path().string());
      if (regular) files.push_back(it->path().string());
    }
    if (ec) throw Error(path + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());  // the same order on every machine
    for (const auto& f : files) add_file(set, f, true);
  } else if (fs::exists(status)) {
    add_file(set, path, false);
  } else {
    throw UsageError(path + ": no such file or folder");
  }
  return set;
}

std::string configuration_key(const nlohmann::json& r) { return key(r, true); }
std::string configuration_key_without_batch(const nlohmann::json& r) { return key(r, false); }

std::string configuration_label(const nlohmann::json& r) {
  const auto& o = r["workload"]["options"];
  std::string label = r["workload"]["name"].get<std::string>() + " " + o.value("scale", "?") + " b" +
                      std::to_string(o.value("batch_size", 0LL)) + " " + o.value("precision", "?");
  if (const long long accum = o.value("grad_accum", 1LL); accum > 1) label += fmt::format(" ×{} accum", accum);
  if (const std::string device = o.value("device", "cpu"); device != "cpu") label += fmt::format(" {}", device);
  if (o.contains("optimizer_impl") && o["optimizer_impl"] != "fused")
    label += " optimizer=" + o["optimizer_impl"].get<std::string>();
  if (channels_last(r)) label += " channels_last";
  if (o.value("host_allocator", "") == "system") label += " host_allocator=system";
  if (o.contains("settings") && o["settings"].is_object()) {
    for (const auto& [k, v] : o["settings"].items())
      label += fmt::format(" {}={}", k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (world_size_of(r) > 1) label += fmt::format(" ×{} ranks", world_size_of(r));
  return label;
}

double median_iteration_s(const nlohmann::json& r) { return fields::number_or_nan(r, {"summary", "median_s"}); }

double throughput_of(const nlohmann::json& r) {
  if (const auto global = fields::number(r, {"distributed", "global_samples_per_s"})) return *global;
  return fields::number_or_nan(r, {"throughput", "samples_per_s"});
}

std::string throughput_unit(const nlohmann::json& r) {
  return fields::string(r, {"throughput", "unit"}).value_or("samples/s");
}

double cpu_utilisation(const nlohmann::json& r) { return fields::number_or_nan(r, {"cpu", "utilisation"}); }

double flops_utilisation(const nlohmann::json& r) {
  return fields::number_or_nan(r, {"flops", "utilization", "measured"});
}

long long peak_memory_bytes(const nlohmann::json& r) {
  return fields::integer(r, {"memory", "peak_bytes"}).value_or(-1);
}

std::vector<double> iteration_times(const nlohmann::json& r) {
  std::vector<double> times;
  for (const auto& t : fields::array(r, {"iterations"}))
    if (t.is_number()) times.push_back(t.get<double>());
  return times;
}

}  // namespace tbd
