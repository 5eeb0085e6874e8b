// The documents tbd's studies write beside their results, read into types:
// a sweep's index (tbd.sweep/1), a suite's index (tbd.suite/1) and a scaling
// study (tbd.scale/1). Fields that are missing or of another type read as
// absent ("?", 0, NaN, empty), never as an error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

// A batch size a sweep tried: how it ended ("ok", "out_of_memory", ...; "?"
// when absent) and its error (empty without one).
struct SweepDocumentPoint {
  long long batch = 0;
  std::string status, error;
};

// A workload of a suite: how its run ended and its error.
struct SuiteDocumentRun {
  std::string workload, status, error;
};

struct SweepDocument {
  std::string workload, stopped_by;          // "?" and "" when absent
  std::optional<long long> largest_fitting;  // none: nothing fitted (null) or not recorded
  std::vector<SweepDocumentPoint> points;
};

struct SuiteDocument {
  std::vector<SuiteDocumentRun> runs;
};

struct ScaleDocumentPoint {
  long long nproc = 0;
  double samples_per_s = 0, speedup = 0, efficiency = 0;  // NaN when absent
};

struct ScaleDocument {
  std::string workload, unit;  // "?" and "samples/s" when absent
  // The first point's scale and batch size per process ("?" and 0 when absent; empty: no point).
  std::optional<std::pair<std::string, long long>> configuration;
  std::vector<ScaleDocumentPoint> points;
};

SweepDocument read_sweep_document(const nlohmann::json& doc);
SuiteDocument read_suite_document(const nlohmann::json& doc);
ScaleDocument read_scale_document(const nlohmann::json& doc);

}  // namespace tbd
