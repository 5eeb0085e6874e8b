#include "tbd/data/parallel_text.h"

#include <algorithm>
#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/data/dataset_paths.h"
#include "tbd/data/text_lines.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

// The languages X of DIR/train.X, sorted.
std::vector<std::string> training_languages(const std::string& dir) {
  std::error_code ec;
  if (path_kind(dir) != PathKind::directory)
    throw UsageError("--data " + dir +
                     ": no such folder; give a folder with train.SRC and "
                     "train.TGT (one sentence per line)");
  std::vector<std::string> languages;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("train.", 0) == 0 && name.size() > 6 && entry_kind(entry) == PathKind::regular)
      languages.push_back(name.substr(6));
  }
  if (ec) throw Error("--data " + dir + ": cannot list the folder (" + ec.message() + ")");
  std::sort(languages.begin(), languages.end());
  if (languages.size() != 2) {
    std::string found;
    for (const auto& l : languages) found += " train." + l;
    throw UsageError("--data " + dir + ": expected exactly two files train.SRC and train.TGT, found " +
                     (found.empty() ? std::string("none") : found.substr(1)));
  }
  return languages;
}

std::shared_ptr<const Vocabulary> vocabulary(const std::string& file,
                                             const std::vector<const std::vector<std::string>*>& text,
                                             int64_t max_size) {
  if (path_kind(file) == PathKind::regular) return std::make_shared<const Vocabulary>(Vocabulary::from_file(file));
  return std::make_shared<const Vocabulary>(Vocabulary::from_text(text, max_size));
}

}  // namespace

ParallelText read_parallel_text(const std::string& dir, const ParallelTextOptions& options) {
  auto languages = training_languages(dir);
  if (options.reverse) std::swap(languages[0], languages[1]);
  ParallelText result;
  result.source_file = (fs::path(dir) / ("train." + languages[0])).string();
  result.target_file = (fs::path(dir) / ("train." + languages[1])).string();
  const auto source = read_text_lines(result.source_file);
  const auto target = read_text_lines(result.target_file);
  if (source.size() != target.size()) {
    const bool source_longer = source.size() > target.size();
    throw Error(result.source_file + " has " + std::to_string(source.size()) + " lines but " + result.target_file +
                " has " + std::to_string(target.size()) + "; " +
                (source_longer ? result.source_file : result.target_file) + ":" +
                std::to_string(std::min(source.size(), target.size()) + 1) +
                " has no translation (the files must be line-aligned)");
  }

  if (options.shared_vocabulary) {
    result.source_vocabulary =
        vocabulary((fs::path(dir) / "vocab.shared").string(), {&source, &target}, options.max_vocabulary);
    result.target_vocabulary = result.source_vocabulary;
  } else {
    result.source_vocabulary =
        vocabulary((fs::path(dir) / ("vocab." + languages[0])).string(), {&source}, options.max_vocabulary);
    result.target_vocabulary =
        vocabulary((fs::path(dir) / ("vocab." + languages[1])).string(), {&target}, options.max_vocabulary);
  }

  for (size_t i = 0; i < source.size(); ++i) {
    auto s = result.source_vocabulary->encode(source[i]);
    auto t = result.target_vocabulary->encode(target[i]);
    if (s.empty() || t.empty()) {
      ++result.dropped;
      continue;
    }
    const auto cap = static_cast<size_t>(options.max_length);
    if (s.size() > cap || t.size() > cap) ++result.truncated;
    if (s.size() > cap) s.resize(cap);
    if (t.size() > cap) t.resize(cap);
    result.pairs.source.push_back(std::move(s));
    result.pairs.target.push_back(std::move(t));
  }
  if (result.pairs.size() == 0)
    throw Error(result.source_file + ", " + result.target_file +
                ": no line pair has words on both sides; nothing to train on");
  return result;
}

}  // namespace tbd
