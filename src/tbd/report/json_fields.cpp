#include "tbd/report/json_fields.h"

#include "tbd/core/error.h"

namespace tbd::fields {

const nlohmann::json* find(const nlohmann::json& j, Path path) {
  const nlohmann::json* node = &j;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

std::optional<double> number(const nlohmann::json& j, Path path) {
  const auto* f = find(j, path);
  if (!f || !f->is_number()) return std::nullopt;
  return f->get<double>();
}

std::optional<long long> integer(const nlohmann::json& j, Path path) {
  const auto* f = find(j, path);
  if (!f || !f->is_number()) return std::nullopt;
  return f->get<long long>();
}

std::optional<std::string> string(const nlohmann::json& j, Path path) {
  const auto* f = find(j, path);
  if (!f || !f->is_string()) return std::nullopt;
  return f->get<std::string>();
}

std::optional<bool> boolean(const nlohmann::json& j, Path path) {
  const auto* f = find(j, path);
  if (!f || !f->is_boolean()) return std::nullopt;
  return f->get<bool>();
}

std::optional<std::string> text(const nlohmann::json& j, Path path) {
  const auto* f = find(j, path);
  if (!f || f->is_null()) return std::nullopt;
  return f->is_string() ? f->get<std::string>() : f->dump();
}

const nlohmann::json& object(const nlohmann::json& j, Path path) {
  static const nlohmann::json empty = nlohmann::json::object();
  const auto* f = find(j, path);
  return f && f->is_object() ? *f : empty;
}

const nlohmann::json& array(const nlohmann::json& j, Path path) {
  static const nlohmann::json empty = nlohmann::json::array();
  const auto* f = find(j, path);
  return f && f->is_array() ? *f : empty;
}

}  // namespace tbd::fields

namespace tbd::fields {
namespace {

// A step of a rule's path: a key, "*" (any member) or "[]" (any element).
std::vector<std::string> steps_of(std::string_view path) {
  std::vector<std::string> steps;
  std::string key;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '.' || path[i] == '[') {
      if (!key.empty()) steps.push_back(key);
      key.clear();
      if (path[i] == '[') {
        const size_t end = path.find(']', i);
        steps.push_back(std::string(path.substr(i, end + 1 - i)));  // "[]" or "[3]"
        i = end;
      }
    } else {
      key += path[i];
    }
  }
  if (!key.empty()) steps.push_back(key);
  return steps;
}

bool has_type(const nlohmann::json& j, Rule::Type t) {
  switch (t) {
    case Rule::Type::string: return j.is_string();
    case Rule::Type::integer: return j.is_number_integer();
    case Rule::Type::number: return j.is_number();
    case Rule::Type::boolean: return j.is_boolean();
    case Rule::Type::object: return j.is_object();
    case Rule::Type::array: return j.is_array();
  }
  return false;
}

bool keeps(const nlohmann::json& j, const Rule& r) {
  if (j.is_null()) return r.nullable;
  if (!has_type(j, r.type)) return false;
  if (!j.is_number() || r.bound == Rule::Bound::none) return true;
  const double v = j.get<double>();
  return r.bound == Rule::Bound::positive ? v > 0 : v >= 0;
}

std::string found_text(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  const char* type = j.is_string()    ? "a string"
                     : j.is_boolean() ? "a boolean"
                     : j.is_number()  ? "a number"
                     : j.is_array()   ? "an array"
                                      : "an object";
  return text + " (" + type + ")";
}

void check_at(const nlohmann::json& node, const std::vector<std::string>& steps, size_t i, const std::string& field,
              const Rule& rule, const std::string& file) {
  if (i == steps.size()) {
    if (!keeps(node, rule)) refuse(file, field, rule_text(rule), &node);
    return;
  }
  const std::string& step = steps[i];
  const auto below = [&](const std::string& name) { return field.empty() ? name : field + "." + name; };
  if (step == "[]") {
    if (!node.is_array()) return;  // the array's own rule says what it must be
    for (size_t k = 0; k < node.size(); ++k)
      check_at(node[k], steps, i + 1, field + "[" + std::to_string(k) + "]", rule, file);
  } else if (step == "*") {
    if (!node.is_object()) return;
    for (const auto& [key, value] : node.items()) check_at(value, steps, i + 1, below(key), rule, file);
  } else if (node.is_object()) {
    const auto it = node.find(step);
    if (it != node.end()) {
      check_at(*it, steps, i + 1, below(step), rule, file);
    } else if (rule.required && i + 1 == steps.size()) {
      refuse(file, below(step), rule_text(rule), nullptr);
    }
  }
}

}  // namespace

std::string rule_text(const Rule& rule) {
  std::string text;
  switch (rule.type) {
    case Rule::Type::string: text = "a string"; break;
    case Rule::Type::integer: text = "an integer"; break;
    case Rule::Type::number: text = "a number"; break;
    case Rule::Type::boolean: text = "true or false"; break;
    case Rule::Type::object: text = "an object"; break;
    case Rule::Type::array: text = "an array"; break;
  }
  const bool whole = rule.type == Rule::Type::integer;
  if (rule.bound == Rule::Bound::non_negative) text += " >= 0";
  if (rule.bound == Rule::Bound::positive) text += whole ? " >= 1" : " > 0";
  if (rule.nullable) text += " or null";
  return text;
}

void refuse(const std::string& file, const std::string& field, const std::string& rule, const nlohmann::json* found) {
  throw Error(file + ": field '" + field + "' must be " + rule + ", " +
              (found ? "found " + found_text(*found) : std::string("but it is missing")) +
              "; the file was edited by hand or written by another program: correct the field or remove the file");
}

void check_fields(const nlohmann::json& doc, std::span<const FieldRule> rules, const std::string& file) {
  for (const auto& r : rules) check_at(doc, steps_of(r.path), 0, "", r.rule, file);
}

const Rule* rule_for(std::span<const FieldRule> rules, std::string_view field) {
  const auto concrete = steps_of(field);
  for (const auto& r : rules) {
    const auto pattern = steps_of(r.path);
    if (pattern.size() != concrete.size()) continue;
    bool match = true;
    for (size_t i = 0; i < pattern.size() && match; ++i) {
      const bool index = !concrete[i].empty() && concrete[i][0] == '[';
      match = pattern[i] == "[]" ? index : pattern[i] == "*" ? !index : pattern[i] == concrete[i];
    }
    if (match) return &r.rule;
  }
  return nullptr;
}

}  // namespace tbd::fields
