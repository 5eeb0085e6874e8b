#include "tbd/core/number_text.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tbd {
namespace {

bool starts_like_a_number(const std::string& text) {
  // strtoll and strtod skip leading white space; a typed value must not have any.
  return !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
}

}  // namespace

std::optional<long long> integer_from_text(const std::string& text) {
  if (!starts_like_a_number(text)) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<unsigned long long> unsigned_from_text(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<double> real_from_text(const std::string& text) {
  if (!starts_like_a_number(text)) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

}  // namespace tbd
