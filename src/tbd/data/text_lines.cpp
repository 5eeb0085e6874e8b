#include "tbd/data/text_lines.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include "tbd/core/error.h"

namespace tbd {

size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07;
    else
      return i;                 // a continuation byte or 0xF8..0xFF where a sequence must start
    if (i + len > n) return i;  // truncated sequence
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static constexpr uint32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open the file; check the --data path");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return bytes.str();
}

std::vector<std::string> read_text_lines(const std::string& path) {
  const std::string text = read_whole_file(path);
  if (text.empty()) throw Error(path + ": the file is empty; expected one sentence per line");
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();  // last line without a newline
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t bad = find_invalid_utf8(line);
    if (bad != std::string_view::npos)
      throw Error(path + ":" + std::to_string(lines.size() + 1) + ": invalid UTF-8 at byte " + std::to_string(bad + 1) +
                  " of the line; the file must be UTF-8 text");
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) tokens.push_back(line.substr(i, j - i));
    i = j;
  }
  return tokens;
}

}  // namespace tbd
