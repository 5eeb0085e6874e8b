// `--csv FILE`: one row per finished run, appended; the header is written when
// the file is new (or empty). Columns in docs/analysis.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

const std::vector<std::string>& csv_columns();

// The row of one result, in csv_columns() order (RFC 4180 quoting; empty
// cells for what a probe that did not run would have measured).
std::vector<std::string> csv_row(const nlohmann::json& result);

// RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled.
std::string csv_escape(const std::string& cell);

// Throws Error when the file exists with a different header (it was written
// by another version of tbd: start a new file) or cannot be written.
void append_csv(const std::string& path, const nlohmann::json& result);

}  // namespace tbd
