#include "tbd/data/byte_text.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string_view>

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

}  // namespace

ByteText::ByteText(const std::string& path, int32_t end_of_text) : path_(path), end_of_text_(end_of_text) {
  constexpr size_t kMapFrom = size_t{1} << 20;
  // Where each document's bytes are: a mapping's index, or (-1) an offset into copied_; and how many.
  struct Place {
    int64_t map;
    size_t offset, bytes;
  };
  std::vector<Place> places;
  for (const auto& file : document_files(path)) {
    MappedFile mapped(file);
    if (mapped.size() == 0) throw Error(file + ": the file is empty; expected plain text");
    const std::string_view text(reinterpret_cast<const char*>(mapped.data()), mapped.size());
    const size_t bad = find_invalid_utf8(text);
    if (bad != std::string::npos) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
      throw Error(file + ":" + std::to_string(line) + ": invalid UTF-8 (byte " + std::to_string(bad + 1) +
                  " of the file); expected plain UTF-8 text");
    }
    starts_.push_back(size_);
    size_ += static_cast<int64_t>(mapped.size()) + 1;  // its bytes and the end-of-text mark
    if (mapped.size() >= kMapFrom) {
      places.push_back({static_cast<int64_t>(mapped_.size()), 0, text.size()});
      mapped_.push_back(std::move(mapped));
    } else {  // copied; the mapping ends here
      places.push_back({-1, copied_.size(), text.size()});
      copied_.append(text);
    }
  }
  // Views last: copied_ no longer moves.
  for (const Place& p : places) {
    const char* bytes = p.map >= 0 ? reinterpret_cast<const char*>(mapped_[static_cast<size_t>(p.map)].data())
                                   : copied_.data() + p.offset;
    documents_.emplace_back(bytes, p.bytes);
  }
}

void ByteText::read(int64_t start, int64_t n, int64_t* out) const {
  // The file holding `start`: the last one starting at or before it.
  auto f = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), start) - starts_.begin() - 1);
  int64_t offset = start - starts_[f];
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view document = documents_[f];
    if (offset < static_cast<int64_t>(document.size())) {
      out[i] = static_cast<unsigned char>(document[static_cast<size_t>(offset++)]);
    } else {  // past the file's last byte: its end-of-text mark, then the next file
      out[i] = end_of_text_;
      ++f;
      offset = 0;
    }
  }
}

TokenWindows::TokenWindows(std::shared_ptr<const ByteText> text, int64_t batch_size, int64_t context, uint64_t seed,
                           int workers, Shard shard)
    : text_(std::move(text)),
      batch_size_(batch_size),
      context_(context),
      seed_(seed),
      prefetcher_([this, shard](int64_t k) { return make(shard.global_batch(k)); }, workers, 2 * workers) {
  if (text_->size() < context + 1)
    throw Error(text_->path() + ": " + std::to_string(text_->size()) +
                " tokens (bytes and end-of-text marks), "
                "fewer than one window of " +
                std::to_string(context + 1) + "; give more text");
}

TokenBatch TokenWindows::make(int64_t k) const {
  const int64_t n = text_->size();
  std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(k)));
  std::uniform_int_distribution<int64_t> offset(0, n - context_ - 1);
  // Row r holds window r's T + 1 tokens; inputs are its first T, targets its last T.
  auto windows = torch::empty({batch_size_, context_ + 1}, torch::kInt64);
  auto* w = windows.data_ptr<int64_t>();
  for (int64_t r = 0; r < batch_size_; ++r) text_->read(offset(rng), context_ + 1, w + r * (context_ + 1));
  TokenBatch batch;
  batch.inputs = windows.narrow(1, 0, context_).contiguous();
  batch.targets = windows.narrow(1, 1, context_).contiguous();
  return batch;
}

}  // namespace tbd
