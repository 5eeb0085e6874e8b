#include "tbd/report/json_fields.h"

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
