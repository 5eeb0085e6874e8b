// Workload-specific knobs given as `--set key=value`, validated against the
// workload's declared specs before anything is built.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tbd {

struct SettingSpec {
  enum class Kind { Integer, Real, Boolean, Choice, Text };
  std::string key;
  Kind kind = Kind::Integer;
  std::string default_value;
  std::string description;
  std::vector<std::string> choices;  // Kind::Choice: the allowed values; Kind::Text: an example
  double min = 0, max = 0;           // Integer/Real: inclusive range
};

SettingSpec integer_setting(std::string key, int64_t def, int64_t min, int64_t max, std::string description);
SettingSpec real_setting(std::string key, double def, double min, double max, std::string description);
SettingSpec bool_setting(std::string key, bool def, std::string description);
SettingSpec choice_setting(std::string key, std::string def, std::vector<std::string> choices, std::string description);
// Free text the workload reads and validates itself (resnet50's widths=NAME:COUNT,...).
SettingSpec text_setting(std::string key, std::string def, std::string example, std::string description);

// Validated values: every declared key present (given or default).
class Settings {
 public:
  Settings() = default;
  // Throws UsageError naming the key and the allowed values.
  Settings(const std::vector<SettingSpec>& specs, const std::map<std::string, std::string>& given,
           const std::string& workload);

  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool boolean(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  const std::string& raw(const std::string& key) const;
  std::map<std::string, std::string> values_;
};

// "key=value" -> pair; throws UsageError on malformed input.
std::pair<std::string, std::string> parse_setting(const std::string& text);

}  // namespace tbd
