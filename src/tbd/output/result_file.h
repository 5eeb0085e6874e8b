// Result files are written atomically: a temporary file in the same folder,
// flushed to disk, then renamed over the target. A reader never sees half a file.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tbd {

// Checked before a run starts, so a long run is not wasted on a bad --out:
// the folder must exist and be writable, and the path must not be a folder.
// Throws UsageError.
void check_output_path(const std::string& path);

// Throws UsageError when two of `outputs` ({flag, path}; "" = not given) name
// one file (after resolving ".", ".." and links): the later write would
// replace the earlier output, or append to it.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Throws Error when the file cannot be written (naming the cause: "No space
// left on device"); the target is then untouched and the temporary removed.
// A signal that abandons the run waits until the file is complete; only
// SIGKILL can leave a PATH.tmp.PID behind.
void write_file_atomically(const std::string& path, const std::string& content);
void write_json_atomically(const std::string& path, const nlohmann::json& document);

}  // namespace tbd
