#include "tbd/data/token_file.h"

#include <filesystem>
#include <fstream>
#include <utility>

#include "tbd/core/error.h"

namespace tbd {
namespace {

int32_t le_int32(const unsigned char* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                              (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24));
}

bool is_llmc_magic(int32_t magic) { return magic == kLlmcGpt2Magic || magic == kLlmcLlama3Magic; }

// llm.c's shard names carry a split and an index: fineweb_train_000001.bin.
bool has_llmc_shard_name(const std::string& path) {
  const auto p = std::filesystem::path(path);
  const std::string stem = p.stem().string();
  return p.extension() == ".bin" &&
         (stem.find("_train_") != std::string::npos || stem.find("_val_") != std::string::npos);
}

bool starts_with_llmc_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[4];
  return in.read(reinterpret_cast<char*>(head), 4) && is_llmc_magic(le_int32(head));
}

std::string at(const std::string& path, int64_t offset) {
  return path + ": byte offset " + std::to_string(offset) + ": ";
}

}  // namespace

std::string format_name(TokenFormat format) {
  switch (format) {
    case TokenFormat::llmc_uint16: return "llm.c shard (version 1, uint16 tokens)";
    case TokenFormat::llmc_uint32: return "llm.c shard (version 7, uint32 tokens)";
    case TokenFormat::nanogpt_uint16: return "nanoGPT .bin (uint16 tokens)";
  }
  return "?";
}

bool looks_like_llmc_shard(const std::string& path) {
  return has_llmc_shard_name(path) || starts_with_llmc_magic(path);
}

bool is_token_file(const std::string& path) {
  return std::filesystem::path(path).extension() == ".bin" || starts_with_llmc_magic(path);
}

TokenFile::TokenFile(std::string path, bool llmc_stream) : path_(std::move(path)), map_(path_) {
  const auto size = static_cast<int64_t>(map_.size());
  const unsigned char* d = map_.data();
  const bool magic = size >= 4 && is_llmc_magic(le_int32(d));
  if (!magic && !llmc_stream && !has_llmc_shard_name(path_)) {
    if (std::filesystem::path(path_).extension() != ".bin")
      throw Error(path_ + ": not a token file: neither an llm.c shard (first int32 " + std::to_string(kLlmcGpt2Magic) +
                  " or " + std::to_string(kLlmcLlama3Magic) + ") nor a nanoGPT .bin file");
    format_ = TokenFormat::nanogpt_uint16;
    if (size == 0) throw Error(path_ + ": the file is empty; a nanoGPT .bin file holds uint16 tokens");
    if (size % 2 != 0)
      throw Error(at(path_, size - 1) + "the file has " + std::to_string(size) +
                  " bytes, an odd number: a nanoGPT .bin file holds 2-byte (uint16) tokens, so its last "
                  "token is cut short; the file is truncated or not a token file");
    tokens_ = size / 2;
    return;
  }
  // An llm.c shard, by its magic, its name or the company it keeps.
  const std::string why = magic                        ? ""
                          : has_llmc_shard_name(path_) ? " (read as an llm.c shard for its name)"
                                                       : " (read as an llm.c shard: the other files are)";
  if (size < kLlmcHeaderBytes)
    throw Error(at(path_, size) + "truncated header: the file ends after " + std::to_string(size) +
                " bytes, but an llm.c header is " + std::to_string(kLlmcHeaderBytes) + " bytes (256 int32)" + why);
  const int32_t m = le_int32(d), version = le_int32(d + 4), count = le_int32(d + 8);
  if (!magic)
    throw Error(at(path_, 0) + "magic " + std::to_string(m) + " is not llm.c's: expected " +
                std::to_string(kLlmcGpt2Magic) + " (GPT-2, uint16 tokens) or " + std::to_string(kLlmcLlama3Magic) +
                " (Llama 3, uint32 tokens)" + why);
  const int32_t expected_version = m == kLlmcGpt2Magic ? 1 : 7;
  if (version != expected_version)
    throw Error(at(path_, 4) + "version " + std::to_string(version) + " does not go with magic " + std::to_string(m) +
                ": llm.c writes version " + std::to_string(expected_version) + " with it (" +
                (m == kLlmcGpt2Magic ? "uint16" : "uint32") + " tokens)");
  format_ = m == kLlmcGpt2Magic ? TokenFormat::llmc_uint16 : TokenFormat::llmc_uint32;
  width_ = m == kLlmcGpt2Magic ? 2 : 4;
  header_ = kLlmcHeaderBytes;
  if (count < 0)
    throw Error(at(path_, 8) + "the token count " + std::to_string(count) + " is negative; the header is corrupt");
  const int64_t body = size - kLlmcHeaderBytes, expected = static_cast<int64_t>(count) * width_;
  if (body < expected)
    throw Error(at(path_, size) + "truncated body: the header (byte offset 8) counts " + std::to_string(count) +
                " tokens, " + std::to_string(expected) + " bytes after the header, but the file ends after " +
                std::to_string(body) + " of them");
  if (body > expected)
    throw Error(at(path_, kLlmcHeaderBytes + expected) + std::to_string(body - expected) +
                " bytes follow the header's " + std::to_string(count) +
                " tokens (count at byte offset 8); the count and the file's size disagree");
  tokens_ = count;
}

}  // namespace tbd
