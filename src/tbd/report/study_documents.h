// The documents tbd's studies write beside their results, read into types:
// a sweep's index (tbd.sweep/1), a suite's index (tbd.suite/1) and a scaling
// study (tbd.scale/1). Fields that are missing or of another type read as
// absent ("?", 0, NaN, empty), never as an error; the check_* functions,
// which every command runs on a document it loads, refuse such a document
// first.
#pragma once

#include <span>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbd/report/json_fields.h"

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

// The rules of each kind (docs/schema) for the fields tbd's commands read.
std::span<const fields::FieldRule> sweep_rules();
std::span<const fields::FieldRule> suite_rules();
std::span<const fields::FieldRule> scale_rules();  // each point's result: result_rules()

// Throw Error naming `file`, the field and the rule where a document breaks
// its kind's rules. A scale document's point results are checked as results,
// named "FILE (point nproc N)".
void check_sweep_document(const nlohmann::json& doc, const std::string& file);
void check_suite_document(const nlohmann::json& doc, const std::string& file);
void check_scale_document(const nlohmann::json& doc, const std::string& file);

}  // namespace tbd
