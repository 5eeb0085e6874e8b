// One pre-tokenized token file as the field stores them, memory-mapped and
// validated at open:
//   - llm.c shards: a header of 256 little-endian int32 (field 0 magic,
//     1 version, 2 token count), then the tokens: magic 20240520 version 1
//     holds uint16 tokens (GPT-2's 50,257 ids), magic 20240801 version 7
//     uint32 tokens (Llama 3's 128,256 ids).
//   - nanoGPT's train.bin / val.bin: headerless little-endian uint16 tokens.
// Which one a file is (docs/workloads.md, gpt's data): a file whose first
// int32 is an llm.c magic is an llm.c shard; so is a `.bin` file named as
// llm.c names its shards (`*_train_*.bin`, `*_val_*.bin`) and any file read
// in one stream with llm.c shards (then a wrong magic is an error, not
// another format); any other `.bin` file is nanoGPT's raw uint16. No nanoGPT
// GPT-2 file can start with a magic: read as uint16 its first ids would be
// 55,000 or 55,201, beyond GPT-2's vocabulary.
#pragma once

#include <cstdint>
#include <string>

#include "tbd/data/mapped_file.h"

namespace tbd {

constexpr int32_t kLlmcGpt2Magic = 20240520;    // version 1, uint16 tokens
constexpr int32_t kLlmcLlama3Magic = 20240801;  // version 7, uint32 tokens
constexpr int64_t kLlmcHeaderBytes = 256 * 4;

enum class TokenFormat {
  llmc_uint16,     // llm.c shard, magic 20240520, version 1
  llmc_uint32,     // llm.c shard, magic 20240801, version 7
  nanogpt_uint16,  // nanoGPT .bin, no header
};

// "llm.c shard (version 1, uint16 tokens)" and so on.
std::string format_name(TokenFormat format);

// Whether a file is a token file by the rule above: its first four bytes are
// an llm.c magic, or its name ends in ".bin". Reads at most four bytes.
bool is_token_file(const std::string& path);

// Whether the file is an llm.c shard by its magic or its name alone.
bool looks_like_llmc_shard(const std::string& path);

class TokenFile {
 public:
  // Maps and validates the file; `llmc_stream`: the file is read with llm.c
  // shards, so it must be one. Throws Error naming the file and the byte
  // offset of what is wrong: an unknown magic or a version that does not go
  // with it, a header shorter than 1,024 bytes, a body shorter or longer
  // than the header's token count, an empty or odd-sized nanoGPT file.
  TokenFile(std::string path, bool llmc_stream);

  const std::string& path() const { return path_; }
  TokenFormat format() const { return format_; }
  int64_t tokens() const { return tokens_; }
  int width() const { return width_; }  // bytes per token: 2 or 4

  // Token i (0 <= i < tokens(); not checked), and where it lies in the file.
  int64_t token(int64_t i) const {
    const unsigned char* p = map_.data() + byte_offset(i);
    int64_t v = p[0] | (static_cast<int64_t>(p[1]) << 8);  // little-endian on every host
    if (width_ == 4) v |= (static_cast<int64_t>(p[2]) << 16) | (static_cast<int64_t>(p[3]) << 24);
    return v;
  }
  int64_t byte_offset(int64_t i) const { return header_ + i * width_; }

 private:
  std::string path_;
  MappedFile map_;
  TokenFormat format_ = TokenFormat::nanogpt_uint16;
  int64_t header_ = 0;
  int width_ = 2;
  int64_t tokens_ = 0;
};

}  // namespace tbd
