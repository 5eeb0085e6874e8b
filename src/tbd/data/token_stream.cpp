#include "tbd/data/token_stream.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "tbd/core/error.h"
#include "tbd/data/dataset_paths.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

// A folder's top-level `.bin` regular files, hidden ones skipped, sorted.
std::vector<std::string> bin_files(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || it->path().extension() != ".bin") continue;
    if (entry_kind(*it) == PathKind::regular) files.push_back(it->path().string());
  }
  if (ec) throw Error("--data " + folder + ": cannot list the folder (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool is_token_data(const std::string& path) {
  switch (path_kind(path)) {
    case PathKind::regular: return is_token_file(path);
    case PathKind::directory: return !bin_files(path).empty();
    case PathKind::missing:
    case PathKind::other: return false;
  }
  return false;
}

std::vector<std::string> token_files(const std::string& path) {
  switch (path_kind(path)) {
    case PathKind::regular: return {path};
    case PathKind::directory: break;
    case PathKind::missing:
      throw UsageError("--data " + path + ": no such file or folder; give a token file or a folder of them");
    case PathKind::other:
      throw UsageError("--data " + path + ": not a regular file (a device, pipe or socket) and not a folder");
  }
  auto files = bin_files(path);
  if (files.empty())
    throw UsageError("--data " + path + ": the folder holds no .bin token files (llm.c shards or nanoGPT train.bin)");
  std::vector<std::string> train;
  for (const auto& f : files)
    if (fs::path(f).filename().string().find("train") != std::string::npos) train.push_back(f);
  return train.empty() ? files : train;
}

TokenStream::TokenStream(const std::vector<std::string>& files, int64_t vocabulary) : vocabulary_(vocabulary) {
  if (files.empty()) throw Error("no token files to read");
  // One llm.c shard makes the whole stream llm.c's: a file among them
  // without the magic is a corrupt shard, not a nanoGPT file.
  const bool llmc = std::any_of(files.begin(), files.end(), looks_like_llmc_shard);
  files_.reserve(files.size());
  for (const auto& path : files) {
    files_.emplace_back(path, llmc);
    const TokenFile& f = files_.back();
    if (f.format() != files_.front().format())
      throw Error(f.path() + " holds " + format_name(f.format()) + " but " + files_.front().path() + " holds " +
                  format_name(files_.front().format()) + "; the files of one data set come from one tokenizer");
    starts_.push_back(size_);
    size_ += f.tokens();
  }
}

void TokenStream::read(int64_t start, int64_t n, int64_t* out) const {
  // The file holding `start`: the last whose first token is at or before it.
  auto f = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), start) - starts_.begin() - 1);
  int64_t i = start - starts_[f];
  for (int64_t k = 0; k < n; ++k, ++i) {
    while (i >= files_[f].tokens()) {  // on into the next file (skipping any empty one)
      i = 0;
      ++f;
    }
    const int64_t id = files_[f].token(i);
    if (id >= vocabulary_)
      throw Error(files_[f].path() + ": byte offset " + std::to_string(files_[f].byte_offset(i)) + ": token id " +
                  std::to_string(id) + " is outside the model's vocabulary of " + std::to_string(vocabulary_) +
                  " ids (0-" + std::to_string(vocabulary_ - 1) +
                  "); the file was tokenized for a larger vocabulary (GPT-2: 50257, Llama 3: 128256): "
                  "train a model with that vocabulary");
    out[k] = id;
  }
}

std::string TokenStream::description() const {
  return format_name(format()) + ", " + std::to_string(files_.size()) + (files_.size() == 1 ? " file, " : " files, ") +
         std::to_string(size_) + " tokens";
}

}  // namespace tbd
