// MLPerf-style logging (`--mllog FILE`): one `:::MLLOG {json}` line per event,
// appended, in the format of the mlperf-logging package (REFERENCE.md).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

// Milliseconds since the Unix epoch, the unit of `time_ms`.
int64_t unix_time_ms();

// One line (without the newline): `:::MLLOG {"namespace": "", "time_ms": ...,
// "event_type": ..., "key": ..., "value": ..., "metadata": {...}}`.
std::string mllog_line(int64_t time_ms, const std::string& event_type, const std::string& key,
                       const nlohmann::json& value, const nlohmann::json& metadata);

// Appends the events of one finished run: run_start (at start_ms),
// submission_benchmark, submission_platform, seed, global_batch_size,
// opt_base_learning_rate (when the workload has an `lr` setting),
// tracked_stats (throughput, iteration-time median) and run_stop (at
// stop_ms; status "success", or "aborted" for a partial run).
// Throws Error when the file cannot be written.
void append_mllog(const std::string& path, const nlohmann::json& result, int64_t start_ms, int64_t stop_ms);

// Before a run: the folder must exist and the path must not be a folder. Throws UsageError.
void check_log_path(const std::string& path, const std::string& option);

// Appends text to a file, creating it (shared by the MLLOG and CSV logs).
void append_to_file(const std::string& path, const std::string& text);

}  // namespace tbd
