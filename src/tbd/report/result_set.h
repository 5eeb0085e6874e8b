// Reading what tbd wrote: result files, the scale, sweep and suite files
// that group them and tbd predict's predictions, from one file or a folder searched recursively. Shared by
// `tbd report` and `tbd compare`. Every error names the file.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

// The schemas this version of tbd reads (and writes).
inline constexpr const char* kResultSchema = "tbd.result/1";
inline constexpr const char* kScaleSchema = "tbd.scale/1";
inline constexpr const char* kSweepSchema = "tbd.sweep/1";
inline constexpr const char* kSuiteSchema = "tbd.suite/1";
inline constexpr const char* kPredictionSchema = "tbd.prediction/1";  // tbd predict --out
inline constexpr const char* kShapesSchema = "tbd.shapes/1";          // tbd shapes --out

struct LoadedRun {
  std::string file;       // where it was read
  std::string origin;     // "" for a result file; "scale, nproc N" for a run inside a tbd.scale file
  nlohmann::json result;  // a tbd.result/1 document
};

struct LoadedDocument {
  std::string file;
  nlohmann::json doc;
};

struct ResultSet {
  std::vector<LoadedRun> runs;
  std::vector<LoadedDocument> scales, sweeps, suites, predictions, shapes;
  std::vector<std::string> skipped;  // JSON files of other kinds (traces, ...) found in folders
};

// A file must be one of the four schemas; in a folder, *.json files without a
// tbd schema are skipped (listed in `skipped`). Malformed JSON, an unknown
// tbd schema version or a result lacking its required fields throws Error.
// A missing path throws UsageError.
ResultSet load_results(const std::string& path);

// Reads and validates one result document (exposed for tests). Throws Error naming `file`.
void validate_result(const nlohmann::json& result, const std::string& file);

// The configuration a run is matched by across files: workload, scale, batch
// size, precision, device, data kind, resolved settings and world size (not
// threads or seed, which count as environment).
std::string configuration_key(const nlohmann::json& result);
// The same without the batch size: the series of a batch-size sweep.
std::string configuration_key_without_batch(const nlohmann::json& result);

// Whether the run's step replayed as a CUDA graph (--cuda-graphs on, or auto
// where it was used): what ran, so an auto run that fell back to eager is the
// eager configuration (its key and label), and `tbd predict --nproc` refuses
// the base (its ranks would run eagerly).
bool replayed_cuda_graph(const nlohmann::json& result);

// Short label: "resnet50 tiny b4 fp32" (+ settings, + "×N ranks").
std::string configuration_label(const nlohmann::json& result);

// Small accessors that tolerate probes that did not run (NaN / -1 when absent).
double median_iteration_s(const nlohmann::json& result);
double throughput_of(const nlohmann::json& result);  // global samples/s for distributed runs
std::string throughput_unit(const nlohmann::json& result);
double cpu_utilisation(const nlohmann::json& result);       // NaN without the cpu probe
double flops_utilisation(const nlohmann::json& result);     // of the measured peak; NaN without it
long long peak_memory_bytes(const nlohmann::json& result);  // -1 without the memory probe
std::vector<double> iteration_times(const nlohmann::json& result);

}  // namespace tbd
