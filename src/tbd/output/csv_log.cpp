#include "tbd/output/csv_log.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/output/mllog.h"
#include "tbd/report/json_fields.h"
#include "tbd/report/result_set.h"

namespace tbd {
namespace {

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : ""; }

// A cell of a field whose type varies (threads, parameters): empty where absent or null.
std::string cell_text(const nlohmann::json& j, fields::Path path) { return fields::text(j, path).value_or(""); }

// A whole JSON-style number: -?digits[.digits][e[+-]digits].
bool is_plain_number(const std::string& s) {
  size_t i = s[0] == '-' ? 1 : 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

std::string join(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_escape(csv_neutralise(cells[i]));
  }
  return line + "\n";
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = {"created_utc",
                                                   "workload",
                                                   "scale",
                                                   "batch_size",
                                                   "precision",
                                                   "device",
                                                   "threads",
                                                   "world_size",
                                                   "settings",
                                                   "data",
                                                   "partial",
                                                   "iterations",
                                                   "median_s",
                                                   "mean_s",
                                                   "stddev_s",
                                                   "ci95_mean_low_s",
                                                   "ci95_mean_high_s",
                                                   "samples_per_s",
                                                   "throughput_unit",
                                                   "cpu_utilisation",
                                                   "flops_utilisation",
                                                   "peak_memory_bytes",
                                                   "parameters",
                                                   "libtorch",
                                                   "cpu_model",
                                                   "hostname",
                                                   "tbd_revision"};
  return columns;
}

std::string csv_neutralise(const std::string& cell) {
  if (cell.empty()) return cell;
  switch (cell[0]) {
    case '=':
    case '+':
    case '-':
    case '@':
    case '\t':
    case '\r':
      if (is_plain_number(cell)) return cell;  // -0.5 is a number, not a formula
      return "'" + cell;
    default: return cell;
  }
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> csv_row(const nlohmann::json& r) {
  const auto& o = r.at("workload").at("options");
  std::string settings;
  if (r["workload"].contains("settings"))
    for (const auto& [k, v] : r["workload"]["settings"].items())
      settings += (settings.empty() ? "" : ";") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  const auto& s = r.contains("summary") ? r["summary"] : nlohmann::json::object();
  const auto summary = [&](const char* key) {
    return s.contains(key) && s[key].is_number() ? number(s[key].get<double>()) : "";
  };
  std::string ci_low, ci_high;
  if (s.contains("ci95_mean_s") && s["ci95_mean_s"].is_array()) {
    ci_low = number(s["ci95_mean_s"][0].get<double>());
    ci_high = number(s["ci95_mean_s"][1].get<double>());
  }
  const long long peak = peak_memory_bytes(r);
  return {cell_text(r, {"created_utc"}),
          r["workload"]["name"].get<std::string>(),
          cell_text(o, {"scale"}),
          cell_text(o, {"batch_size"}),
          cell_text(o, {"precision"}),
          cell_text(o, {"device"}),
          cell_text(o, {"threads"}),
          o.contains("world_size") ? o["world_size"].dump() : "1",
          settings,
          cell_text(o, {"data"}),
          r.value("partial", false) ? "true" : "false",
          std::to_string(r["iterations"].size()),
          summary("median_s"),
          summary("mean_s"),
          summary("stddev_s"),
          ci_low,
          ci_high,
          number(throughput_of(r)),
          throughput_unit(r),
          number(cpu_utilisation(r)),
          number(flops_utilisation(r)),
          peak >= 0 ? std::to_string(peak) : "",
          cell_text(r, {"model", "parameters"}),
          cell_text(r, {"environment", "libtorch", "version"}),
          cell_text(r, {"environment", "cpu", "model"}),
          cell_text(r, {"environment", "os", "hostname"}),
          cell_text(r, {"environment", "tbd", "git_revision"})};
}

void append_csv(const std::string& path, const nlohmann::json& result) {
  const std::string header = join(csv_columns());
  std::string first_line;
  {
    std::ifstream in(path);
    if (in) std::getline(in, first_line);
  }
  std::string text;
  if (first_line.empty()) {
    text = header;
  } else if (first_line + "\n" != header) {
    throw Error(path + ": its header is not the one this tbd writes (" + std::to_string(csv_columns().size()) +
                " columns starting created_utc,workload,...); append to a new file instead");
  }
  append_to_file(path, text + join(csv_row(result)));
}

}  // namespace tbd
