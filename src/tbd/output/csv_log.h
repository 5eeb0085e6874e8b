// `--csv FILE`: one row per finished run, appended; the header is written when
// the file is new (or empty). Columns in docs/analysis.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbd {

const std::vector<std::string>& csv_columns();

// The row of one result, in csv_columns() order, unquoted (empty cells for
// what a probe that did not run would have measured).
std::vector<std::string> csv_row(const nlohmann::json& result);

// RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled.
std::string csv_escape(const std::string& cell);

// Formula injection (OWASP "CSV Injection"): a cell starting with =, +, -,
// @, tab or carriage return gets a leading single quote, so a spreadsheet
// shows it as text instead of evaluating it; a plain number such as -0.25 or
// -1e-05 is left as it is. append_csv applies it to every cell, before csv_escape.
std::string csv_neutralise(const std::string& cell);

// Throws Error when the file exists with a different header (it was written
// by another version of tbd: start a new file) or cannot be written.
void append_csv(const std::string& path, const nlohmann::json& result);

}  // namespace tbd
