#include "tbd/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/data/dataset_paths.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {
bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg";
}
}  // namespace

ImageFolder::ImageFolder(const std::string& root) {
  std::error_code ec;
  if (path_kind(root) != PathKind::directory)
    throw UsageError("--data " + root +
                     ": no such folder; give an ImageNet-style folder with one "
                     "sub-folder of JPEGs per class");
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry_kind(entry) == PathKind::directory) class_names_.push_back(entry.path().filename().string());
  if (ec) throw Error("--data " + root + ": cannot list the folder (" + ec.message() + ")");
  std::sort(class_names_.begin(), class_names_.end());
  if (class_names_.empty())
    throw UsageError("--data " + root + ": no class sub-folders; expected ROOT/<class>/<image>.jpg");
  for (size_t c = 0; c < class_names_.size(); ++c) {
    const fs::path folder = fs::path(root) / class_names_[c];
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (is_jpeg_name(entry.path()) && entry_kind(entry) == PathKind::regular) names.push_back(entry.path().string());
    if (ec) throw Error("--data " + root + ": cannot list " + folder.string() + " (" + ec.message() + ")");
    // Every sub-folder is a class: an empty one would shift the labels of the
    // classes after it and give the model an output no image ever trains.
    if (names.empty())
      throw UsageError("--data " + root + ": class folder " + folder.string() +
                       " holds no .jpg/.jpeg files; every sub-folder counts as a class, so add its images "
                       "or move the folder out of " +
                       root);
    std::sort(names.begin(), names.end());
    for (auto& n : names) {
      files_.push_back(std::move(n));
      labels_.push_back(static_cast<int64_t>(c));
    }
  }
}

}  // namespace tbd
