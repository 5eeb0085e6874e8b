// Fields of tbd's documents read without trusting them. A file may come from
// an older tbd, another program or a hand edit: a missing key, a parent that
// is not an object and a value of another type all read as absent, never as
// a JSON-library type error. The typed document readers (result_document,
// study_documents, prediction_document) are built on these.
//
// Reading tolerates; loading refuses: before a command uses a document, its
// reader checks it against the rules of its kind (check_fields below, from
// docs/schema), so a field of the wrong type, out of its range or of the
// wrong length is an error naming the file, the field and the rule, never a
// figure computed from nonsense or a JSON-library message.
#pragma once

#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

// What a field must be. Absent fields pass unless `required`: probes that did
// not run leave their sections out, and older files lack newer fields.
struct Rule {
  enum class Type { string, integer, number, boolean, object, array } type;
  enum class Bound { none, non_negative, positive } bound = Bound::none;  // numbers only
  bool nullable = false;                                                  // null stands for "not measured"
  bool required = false;
};

// A rule for the fields at `path`: keys joined by '.', where "[]" after a key
// means each element of that array and "*" each member of that object:
// "gradients.backward_passes[].ready_fraction[]", "memory.breakdown.*".
struct FieldRule {
  std::string_view path;
  Rule rule;
};

// The rules by name, for the readers' tables.
namespace rules {
using Type = Rule::Type;
using Bound = Rule::Bound;
inline constexpr Rule string{Type::string}, integer{Type::integer}, number{Type::number}, boolean{Type::boolean},
    object{Type::object}, array{Type::array};
inline constexpr Rule count{Type::integer, Bound::non_negative}, positive_integer{Type::integer, Bound::positive};
inline constexpr Rule non_negative{Type::number, Bound::non_negative}, positive{Type::number, Bound::positive};
constexpr Rule or_null(Rule r) {
  r.nullable = true;
  return r;
}
constexpr Rule required(Rule r) {
  r.required = true;
  return r;
}
}  // namespace rules

// Throws Error for the first field that breaks its rule, naming `file`, the
// field ("throughput.repetitions[1].seconds") and the rule.
void check_fields(const nlohmann::json& doc, std::span<const FieldRule> rules, const std::string& file);

// The refusal check_fields throws, for a reader's rules that are not a
// field's type (lengths that must agree, a list that must not be empty):
// "FILE: field 'FIELD' must be RULE, found VALUE; ...". `found` may be null.
[[noreturn]] void refuse(const std::string& file, const std::string& field, const std::string& rule,
                         const nlohmann::json* found);

// The rule in words: "an integer >= 1", "a number > 0 or null".
std::string rule_text(const Rule& rule);

// The rule whose path names `field` (as check_fields names fields:
// "a.b[3].c"), or nullptr: tests mutate each field and expect a refusal
// exactly where a rule applies.
const Rule* rule_for(std::span<const FieldRule> rules, std::string_view field);

}  // namespace tbd::fields
