// A word vocabulary with the four special tokens every translation model
// here uses: <unk> (out-of-vocabulary words), <s> (decoder start), </s>
// (end of sentence) and <pad> (ignored by the loss and by attention).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tbd {

class Vocabulary {
 public:
  static constexpr const char* kUnk = "<unk>";
  static constexpr const char* kBos = "<s>";
  static constexpr const char* kEos = "</s>";
  static constexpr const char* kPad = "<pad>";

  // Token list in id order; special tokens missing from it are put in front
  // (TF nmt's convention: a vocab file without them still works).
  // Throws std::invalid_argument on a duplicate token.
  explicit Vocabulary(std::vector<std::string> tokens);

  // A vocab file: one token per line (TF nmt's vocab.LANG). Throws Error
  // naming FILE:LINE for an empty line, a line with whitespace inside, a
  // duplicate token or invalid UTF-8.
  static Vocabulary from_file(const std::string& path);

  // The `max_size` most frequent tokens of `lines` (ties broken by the token's
  // bytes, so the result does not depend on hash order), plus the specials;
  // max_size counts the specials, 0 means no cap.
  static Vocabulary from_text(const std::vector<const std::vector<std::string>*>& lines, int64_t max_size);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t id(std::string_view token) const;  // <unk>'s id when unknown
  const std::string& token(int64_t id) const { return tokens_[static_cast<size_t>(id)]; }
  int64_t unk() const { return unk_; }
  int64_t bos() const { return bos_; }
  int64_t eos() const { return eos_; }
  int64_t pad() const { return pad_; }

  // Ids of the whitespace-separated tokens of `line`.
  std::vector<int32_t> encode(std::string_view line) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
  int64_t unk_ = 0, bos_ = 0, eos_ = 0, pad_ = 0;
};

}  // namespace tbd
