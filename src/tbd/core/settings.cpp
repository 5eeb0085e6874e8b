#include "tbd/core/settings.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"

namespace tbd {
namespace {

bool parse_integer(const std::string& s, int64_t& out) {
  const auto v = integer_from_text(s);
  if (v) out = *v;
  return v.has_value();
}

bool parse_real(const std::string& s, double& out) {
  const auto v = real_from_text(s);
  if (!v || !std::isfinite(*v)) return false;
  out = *v;
  return true;
}

bool parse_bool(const std::string& s, bool& out) {
  if (s == "true" || s == "1" || s == "yes" || s == "on") return out = true, true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return out = false, true;
  return false;
}

std::string describe(const SettingSpec& spec) {
  std::ostringstream os;
  switch (spec.kind) {
    case SettingSpec::Kind::Integer:
      os << "an integer in [" << static_cast<int64_t>(spec.min) << ", " << static_cast<int64_t>(spec.max) << "]";
      break;
    case SettingSpec::Kind::Real: os << "a number in [" << spec.min << ", " << spec.max << "]"; break;
    case SettingSpec::Kind::Boolean: os << "true or false"; break;
    case SettingSpec::Kind::Choice: {
      os << "one of ";
      for (size_t i = 0; i < spec.choices.size(); ++i) os << (i ? ", " : "") << spec.choices[i];
      break;
    }
    case SettingSpec::Kind::Text: os << "text such as " << (spec.choices.empty() ? "" : spec.choices.front()); break;
  }
  return os.str();
}

bool valid(const SettingSpec& spec, const std::string& value) {
  switch (spec.kind) {
    case SettingSpec::Kind::Integer: {
      int64_t v;
      return parse_integer(value, v) && v >= spec.min && v <= spec.max;
    }
    case SettingSpec::Kind::Real: {
      double v;
      return parse_real(value, v) && v >= spec.min && v <= spec.max;
    }
    case SettingSpec::Kind::Boolean: {
      bool v;
      return parse_bool(value, v);
    }
    case SettingSpec::Kind::Choice:
      for (const auto& c : spec.choices)
        if (c == value) return true;
      return false;
    case SettingSpec::Kind::Text: return true;  // the workload reads it (and refuses it with the reason)
  }
  return false;
}

}  // namespace

SettingSpec integer_setting(std::string key, int64_t def, int64_t min, int64_t max, std::string description) {
  SettingSpec s;
  s.key = std::move(key);
  s.kind = SettingSpec::Kind::Integer;
  s.default_value = std::to_string(def);
  s.min = static_cast<double>(min);
  s.max = static_cast<double>(max);
  s.description = std::move(description);
  return s;
}

SettingSpec real_setting(std::string key, double def, double min, double max, std::string description) {
  SettingSpec s;
  s.key = std::move(key);
  s.kind = SettingSpec::Kind::Real;
  std::ostringstream os;
  os << def;
  s.default_value = os.str();
  s.min = min;
  s.max = max;
  s.description = std::move(description);
  return s;
}

SettingSpec bool_setting(std::string key, bool def, std::string description) {
  SettingSpec s;
  s.key = std::move(key);
  s.kind = SettingSpec::Kind::Boolean;
  s.default_value = def ? "true" : "false";
  s.description = std::move(description);
  return s;
}

SettingSpec choice_setting(std::string key, std::string def, std::vector<std::string> choices,
                           std::string description) {
  SettingSpec s;
  s.key = std::move(key);
  s.kind = SettingSpec::Kind::Choice;
  s.default_value = std::move(def);
  s.choices = std::move(choices);
  s.description = std::move(description);
  return s;
}

SettingSpec text_setting(std::string key, std::string def, std::string example, std::string description) {
  SettingSpec s;
  s.key = std::move(key);
  s.kind = SettingSpec::Kind::Text;
  s.default_value = std::move(def);
  s.choices = {std::move(example)};
  s.description = std::move(description);
  return s;
}

std::pair<std::string, std::string> parse_setting(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--set expects key=value, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Settings::Settings(const std::vector<SettingSpec>& specs, const std::map<std::string, std::string>& given,
                   const std::string& workload) {
  for (const auto& [key, value] : given) {
    const SettingSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.key == key) spec = &s;
    if (!spec) {
      std::vector<std::string> known;
      for (const auto& s : specs) known.push_back(s.key);
      throw UsageError(fmt::format("unknown setting '{}' for {}; known settings: {} (see `tbd list {}`)", key, workload,
                                   known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", ")),
                                   workload));
    }
    if (!valid(*spec, value))
      throw UsageError("bad value '" + value + "' for setting " + key + " of " + workload + ": expected " +
                       describe(*spec));
  }
  for (const auto& s : specs) {
    auto it = given.find(s.key);
    values_[s.key] = it != given.end() ? it->second : s.default_value;
  }
}

const std::string& Settings::raw(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw Error("internal: setting '" + key + "' was never declared");
  return it->second;
}

int64_t Settings::integer(const std::string& key) const {
  int64_t v = 0;
  parse_integer(raw(key), v);
  return v;
}

double Settings::real(const std::string& key) const {
  double v = 0;
  parse_real(raw(key), v);
  return v;
}

bool Settings::boolean(const std::string& key) const {
  bool v = false;
  parse_bool(raw(key), v);
  return v;
}

const std::string& Settings::text(const std::string& key) const { return raw(key); }

}  // namespace tbd
