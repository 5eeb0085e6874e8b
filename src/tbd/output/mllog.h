// MLPerf-style logging (`--mllog FILE`): one `:::MLLOG {json}` line per event,
// appended, in the format of the mlperf-logging package (REFERENCE.md).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

// One line (without the newline): `:::MLLOG {"namespace": "", "time_ms": ...,
// "event_type": ..., "key": ..., "value": ..., "metadata": {...}}`.
std::string mllog_line(int64_t time_ms, const std::string& event_type, const std::string& key,
                       const nlohmann::json& value, const nlohmann::json& metadata);

// MLPerf Training's benchmark name for a workload where MLPerf ran the same
// published model (resnet50 → resnet, transformer, seq2seq → gnmt, dlrm);
// tbd's own name otherwise.
std::string mlperf_benchmark_name(const std::string& workload);

// Appends the events of one finished run in the order MLPerf's compliance
// checker requires (docs/analysis.md#mlperf-logs): cache_clear, init_start,
// the submission and hyperparameter keys, init_stop (workload built),
// run_start, one block per timed repetition (block_start, tracked_stats,
// block_stop) and run_stop (status "success", or "aborted" for a partial
// run), at the times of the result's wall_clock section. Throws Error when
// the result has none or the file cannot be written.
void append_mllog(const std::string& path, const nlohmann::json& result);

// Before a run: the folder must exist and the path must not be a folder. Throws UsageError.
void check_log_path(const std::string& path, const std::string& option);

// Appends text to a file, creating it (shared by the MLLOG and CSV logs).
void append_to_file(const std::string& path, const std::string& text);

}  // namespace tbd
