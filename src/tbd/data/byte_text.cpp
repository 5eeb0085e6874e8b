#include "tbd/data/byte_text.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/data/dataset_paths.h"
#include "tbd/data/text_lines.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> document_files(const std::string& path) {
  std::error_code ec;
  switch (path_kind(path)) {
    case PathKind::regular: return {path};
    case PathKind::directory: break;
    case PathKind::missing:
      throw UsageError("--data " + path + ": no such file or folder; give a text file or a folder of them");
    case PathKind::other:
      throw UsageError("--data " + path +
                       ": not a regular file (a device, pipe or socket) and not a folder; "
                       "give a text file or a folder of them");
  }
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      ec.clear();
      continue;
    }
    if (entry_kind(*it) == PathKind::regular) files.push_back(it->path().string());
  }
  if (ec) throw Error("--data " + path + ": cannot list the folder (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("--data " + path + ": the folder holds no files");
  return files;
}

// The tokens, if they hold at least one window of context+1.
std::shared_ptr<const std::vector<int32_t>> checked(std::shared_ptr<const std::vector<int32_t>> tokens, int64_t context,
                                                    const std::string& source) {
  if (static_cast<int64_t>(tokens->size()) < context + 1)
    throw Error(source + ": " + std::to_string(tokens->size()) +
                " tokens (bytes and end-of-text marks), "
                "fewer than one window of " +
                std::to_string(context + 1) + "; give more text");
  return tokens;
}

}  // namespace

std::vector<int32_t> read_byte_tokens(const std::string& path, int32_t end_of_text) {
  std::vector<int32_t> tokens;
  for (const auto& file : document_files(path)) {
    const std::string text = read_whole_file(file);
    if (text.empty()) throw Error(file + ": the file is empty; expected plain text");
    const size_t bad = find_invalid_utf8(text);
    if (bad != std::string::npos) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
      throw Error(file + ":" + std::to_string(line) + ": invalid UTF-8 (byte " + std::to_string(bad + 1) +
                  " of the file); expected plain UTF-8 text");
    }
    for (unsigned char c : text) tokens.push_back(c);
    tokens.push_back(end_of_text);
  }
  return tokens;
}

TokenWindows::TokenWindows(std::shared_ptr<const std::vector<int32_t>> tokens, int64_t batch_size, int64_t context,
                           uint64_t seed, int workers, const std::string& source, Shard shard)
    : tokens_(checked(std::move(tokens), context, source)),
      batch_size_(batch_size),
      context_(context),
      seed_(seed),
      prefetcher_([this, shard](int64_t k) { return make(shard.global_batch(k)); }, workers, 2 * workers) {}

TokenBatch TokenWindows::make(int64_t k) const {
  const auto n = static_cast<int64_t>(tokens_->size());
  TokenBatch batch;
  batch.inputs = torch::empty({batch_size_, context_}, torch::kInt64);
  batch.targets = torch::empty({batch_size_, context_}, torch::kInt64);
  std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(k)));
  std::uniform_int_distribution<int64_t> offset(0, n - context_ - 1);
  auto in = batch.inputs.accessor<int64_t, 2>();
  auto out = batch.targets.accessor<int64_t, 2>();
  for (int64_t r = 0; r < batch_size_; ++r) {
    const int64_t o = offset(rng);
    for (int64_t j = 0; j < context_; ++j) {
      in[r][j] = (*tokens_)[static_cast<size_t>(o + j)];
      out[r][j] = (*tokens_)[static_cast<size_t>(o + j + 1)];
    }
  }
  return batch;
}

}  // namespace tbd
