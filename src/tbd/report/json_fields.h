// Fields of tbd's documents read without trusting them. A file may come from
// an older tbd, another program or a hand edit: a missing key, a parent that
// is not an object and a value of another type all read as absent, never as
// a JSON-library type error. The typed document readers (result_document,
// study_documents, prediction_document) are built on these.
#pragma once

#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tbd::fields {

// Keys from the document's root to the field: {"environment", "cpu", "model"}.
using Path = std::initializer_list<const char*>;

// The field, or nullptr where a step of the path is absent or not an object.
const nlohmann::json* find(const nlohmann::json& j, Path path);

std::optional<double> number(const nlohmann::json& j, Path path);
// Any JSON number, converted the way nlohmann's value() converts (4.0 reads as 4).
std::optional<long long> integer(const nlohmann::json& j, Path path);
std::optional<std::string> string(const nlohmann::json& j, Path path);
std::optional<bool> boolean(const nlohmann::json& j, Path path);
// A string as it is, any other value (but null) as its JSON text: what a
// table cell shows of a field whose type varies (threads, parameters).
std::optional<std::string> text(const nlohmann::json& j, Path path);
// The object or array there, or an empty one: iterating an absent list
// visits nothing.
const nlohmann::json& object(const nlohmann::json& j, Path path);
const nlohmann::json& array(const nlohmann::json& j, Path path);

// The field as a figure: NaN where absent (tables show "-", charts a gap).
inline double number_or_nan(const nlohmann::json& j, Path path) {
  return number(j, path).value_or(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace tbd::fields
