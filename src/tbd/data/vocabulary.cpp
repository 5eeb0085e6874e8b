#include "tbd/data/vocabulary.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "tbd/core/error.h"
#include "tbd/data/text_lines.h"

namespace tbd {
namespace fs = std::filesystem;

Vocabulary::Vocabulary(std::vector<std::string> tokens) {
  std::vector<std::string> missing;
  for (const char* special : {kUnk, kBos, kEos, kPad})
    if (std::find(tokens.begin(), tokens.end(), special) == tokens.end()) missing.emplace_back(special);
  tokens_ = std::move(missing);
  tokens_.insert(tokens_.end(), std::make_move_iterator(tokens.begin()), std::make_move_iterator(tokens.end()));
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!ids_.emplace(tokens_[i], static_cast<int64_t>(i)).second)
      throw std::invalid_argument("duplicate vocabulary token '" + tokens_[i] + "'");
  unk_ = ids_.at(kUnk);
  bos_ = ids_.at(kBos);
  eos_ = ids_.at(kEos);
  pad_ = ids_.at(kPad);
}

Vocabulary Vocabulary::from_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0 && !ec)
    throw Error(path +
                ": the vocabulary file is empty; it must hold one token per line: fill it, or remove it "
                "to have the vocabulary built from the training text");
  const auto lines = read_text_lines(path);
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = path + ":" + std::to_string(i + 1) + ": ";
    const auto tokens = split_tokens(lines[i]);
    if (tokens.empty()) throw Error(where + "empty line; a vocab file holds one token per line");
    if (tokens.size() > 1 || tokens[0].size() != lines[i].size())
      throw Error(where + "'" + lines[i] + "' is not one token (whitespace inside)");
    auto [it, fresh] = seen.emplace(lines[i], i + 1);
    if (!fresh)
      throw Error(where + "duplicate token '" + lines[i] + "' (first on line " + std::to_string(it->second) + ")");
  }
  return Vocabulary(lines);
}

Vocabulary Vocabulary::from_text(const std::vector<const std::vector<std::string>*>& texts, int64_t max_size) {
  std::unordered_map<std::string, int64_t> counts;
  for (const auto* lines : texts)
    for (const auto& line : *lines)
      for (auto token : split_tokens(line)) ++counts[std::string(token)];
  for (const char* special : {kUnk, kBos, kEos, kPad}) counts.erase(special);
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_size > 0) {
    const size_t keep = static_cast<size_t>(std::max<int64_t>(0, max_size - 4));  // room for the specials
    if (sorted.size() > keep) sorted.resize(keep);
  }
  std::vector<std::string> tokens;
  tokens.reserve(sorted.size());
  for (auto& [token, count] : sorted) tokens.push_back(std::move(token));
  return Vocabulary(std::move(tokens));
}

int64_t Vocabulary::id(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? unk_ : it->second;
}

std::vector<int32_t> Vocabulary::encode(std::string_view line) const {
  std::vector<int32_t> ids;
  for (auto token : split_tokens(line)) ids.push_back(static_cast<int32_t>(id(token)));
  return ids;
}

}  // namespace tbd
