#include "tbd/report/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"

namespace tbd {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_json(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(file + ": cannot be read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": not valid JSON (" + std::string(e.what()) +
                "); was it truncated? Re-run the benchmark that wrote it, or remove the file");
  }
}

bool is_number(const nlohmann::json& j) { return j.is_number(); }

void validate_scale(const nlohmann::json& doc, const std::string& file) {
  if (!doc.contains("points") || !doc["points"].is_array())
    throw Error(file + ": tbd.scale/1 document lacks its 'points' array");
  for (const auto& p : doc["points"]) {
    if (!p.contains("nproc") || !p.contains("result"))
      throw Error(file + ": a point of the tbd.scale/1 document lacks 'nproc' or 'result'");
    validate_result(p["result"], file + " (point nproc " + p["nproc"].dump() + ")");
  }
}

void add_file(ResultSet& set, const std::string& file, bool from_folder) {
  const nlohmann::json doc = read_json(file);
  const std::string schema = doc.is_object() && doc.contains("schema") && doc["schema"].is_string()
                                 ? doc["schema"].get<std::string>()
                                 : "";
  if (schema == kResultSchema) {
    validate_result(doc, file);
    set.runs.push_back({file, "", doc});
  } else if (schema == kScaleSchema) {
    validate_scale(doc, file);
    for (const auto& p : doc["points"])
      set.runs.push_back({file, "scale, nproc " + p["nproc"].dump(), p["result"]});
    set.scales.push_back({file, doc});
  } else if (schema == kSweepSchema) {
    if (!doc.contains("points") || !doc["points"].is_array())
      throw Error(file + ": tbd.sweep/1 document lacks its 'points' array");
    set.sweeps.push_back({file, doc});
  } else if (schema == kSuiteSchema) {
    if (!doc.contains("runs") || !doc["runs"].is_array())
      throw Error(file + ": tbd.suite/1 document lacks its 'runs' array");
    set.suites.push_back({file, doc});
  } else if (schema.rfind("tbd.", 0) == 0) {
    throw Error(file + ": unknown schema '" + schema + "'; this tbd reads " + kResultSchema + ", " + kScaleSchema +
                ", " + kSweepSchema + " and " + kSuiteSchema + " (a newer tbd wrote it? use that version)");
  } else if (from_folder) {
    set.skipped.push_back(file);
  } else {
    throw Error(file + ": not a tbd file (no \"schema\": \"tbd.result/1\" or another tbd schema); "
                "give a file written by tbd run, sweep, scale or suite");
  }
}

std::string settings_text(const nlohmann::json& result) {
  const auto& w = result["workload"];
  const nlohmann::json& s = w.contains("settings") && w["settings"].is_object() ? w["settings"] : w["options"]["settings"];
  std::string text;
  for (const auto& [k, v] : s.items()) text += (text.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return text;
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
  // Results written before --optimizer-impl existed stepped with LibTorch's loop.
  k << " precision=" << o.value("precision", "?") << " optimizer=" << o.value("optimizer_impl", "loop")
    << " device=" << o.value("device", "?")
    << " data=" << (o.value("data", "synthetic") == "synthetic" ? "synthetic" : "real")
    << " settings=[" << settings_text(r) << "] world=" << world_size_of(r);
  return k.str();
}

}  // namespace

void validate_result(const nlohmann::json& r, const std::string& file) {
  if (!r.is_object()) throw Error(file + ": a result must be a JSON object");
  if (r.value("schema", "") != kResultSchema)
    throw Error(file + ": expected schema " + kResultSchema + ", found " + (r.contains("schema") ? r["schema"].dump() : "none"));
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
}

ResultSet load_results(const std::string& path) {
  ResultSet set;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path().string());
    if (ec) throw Error(path + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());  // the same order on every machine
    for (const auto& f : files) add_file(set, f, true);
  } else if (fs::exists(path, ec)) {
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
  if (const std::string device = o.value("device", "cpu"); device != "cpu") label += fmt::format(" {}", device);
  if (const std::string impl = o.value("optimizer_impl", "loop"); impl != "fused") label += " optimizer=" + impl;
  if (!o["settings"].empty()) {
    for (const auto& [k, v] : o["settings"].items())
      label += fmt::format(" {}={}", k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (world_size_of(r) > 1) label += fmt::format(" ×{} ranks", world_size_of(r));
  return label;
}

double median_iteration_s(const nlohmann::json& r) {
  if (r.contains("summary") && r["summary"].contains("median_s") && r["summary"]["median_s"].is_number())
    return r["summary"]["median_s"].get<double>();
  return NAN;
}

double throughput_of(const nlohmann::json& r) {
  if (r.contains("distributed") && r["distributed"].is_object() && r["distributed"].contains("global_samples_per_s"))
    return r["distributed"]["global_samples_per_s"].get<double>();
  const auto& t = r["throughput"];
  return t.contains("samples_per_s") && is_number(t["samples_per_s"]) ? t["samples_per_s"].get<double>() : NAN;
}

std::string throughput_unit(const nlohmann::json& r) { return r["throughput"].value("unit", "samples/s"); }

double cpu_utilisation(const nlohmann::json& r) {
  if (r.contains("cpu") && r["cpu"].contains("utilisation") && r["cpu"]["utilisation"].is_number())
    return r["cpu"]["utilisation"].get<double>();
  return NAN;
}

double flops_utilisation(const nlohmann::json& r) {
  if (r.contains("flops") && r["flops"].contains("utilization") && r["flops"]["utilization"].contains("measured") &&
      r["flops"]["utilization"]["measured"].is_number())
    return r["flops"]["utilization"]["measured"].get<double>();
  return NAN;
}

long long peak_memory_bytes(const nlohmann::json& r) {
  if (r.contains("memory") && r["memory"].contains("peak_bytes") && r["memory"]["peak_bytes"].is_number())
    return r["memory"]["peak_bytes"].get<long long>();
  return -1;
}

std::vector<double> iteration_times(const nlohmann::json& r) { return r["iterations"].get<std::vector<double>>(); }

}  // namespace tbd
