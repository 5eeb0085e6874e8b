#include "tbd/report/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/report/json_fields.h"
#include "tbd/report/prediction_document.h"
#include "tbd/report/result_document.h"
#include "tbd/report/shapes_document.h"
#include "tbd/report/study_documents.h"

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

void add_file(ResultSet& set, const std::string& file, bool from_folder) {
  const nlohmann::json doc = read_json(file);
  const std::string schema =
      doc.is_object() && doc.contains("schema") && doc["schema"].is_string() ? doc["schema"].get<std::string>() : "";
  // Each kind's reader checks it (types, ranges, lengths that must agree),
  // so nothing downstream computes from a field of the wrong type.
  if (schema == kResultSchema) {
    validate_result(doc, file);
    set.runs.push_back({file, "", doc});
  } else if (schema == kScaleSchema) {
    check_scale_document(doc, file);
    for (const auto& p : doc["points"]) set.runs.push_back({file, "scale, nproc " + p["nproc"].dump(), p["result"]});
    set.scales.push_back({file, doc});
  } else if (schema == kSweepSchema) {
    check_sweep_document(doc, file);
    set.sweeps.push_back({file, doc});
  } else if (schema == kSuiteSchema) {
    check_suite_document(doc, file);
    set.suites.push_back({file, doc});
  } else if (schema == kPredictionSchema) {
    check_prediction_document(doc, file);
    set.predictions.push_back({file, doc});
  } else if (schema == kShapesSchema) {
    check_shapes_document(doc, file);
    set.shapes.push_back({file, doc});
  } else if (schema.rfind("tbd.", 0) == 0) {
    throw Error(file + ": unknown schema '" + schema + "'; this tbd reads " + kResultSchema + ", " + kScaleSchema +
                ", " + kSweepSchema + ", " + kSuiteSchema + ", " + kPredictionSchema + " and " + kShapesSchema +
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
  if (replayed_cuda_graph(r)) k << " cuda_graphs";
  return k.str();
}

}  // namespace

void validate_result(const nlohmann::json& r, const std::string& file) {
  if (!r.is_object()) throw Error(file + ": a result must be a JSON object");
  if (!r.contains("schema") || r["schema"] != kResultSchema)
    throw Error(file + ": expected schema " + kResultSchema + ", found " +
                (r.contains("schema") ? r["schema"].dump() : "none"));
  check_result_document(r, file);
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

bool replayed_cuda_graph(const nlohmann::json& result) {
  return fields::boolean(result, {"framework", "cuda_graphs", "used"}).value_or(false);
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
  if (replayed_cuda_graph(r)) label += " cuda-graphs";
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
