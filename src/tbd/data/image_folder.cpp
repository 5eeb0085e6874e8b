#include "tbd/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "tbd/core/error.h"

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
  if (!fs::is_directory(root, ec))
    throw UsageError("--data " + root + ": no such folder; give an ImageNet-style folder with one "
                     "sub-folder of JPEGs per class");
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory()) class_names_.push_back(entry.path().filename().string());
  std::sort(class_names_.begin(), class_names_.end());
  if (class_names_.empty())
    throw UsageError("--data " + root + ": no class sub-folders; expected ROOT/<class>/<image>.jpg");
  for (size_t c = 0; c < class_names_.size(); ++c) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / class_names_[c], ec))
      if (entry.is_regular_file() && is_jpeg_name(entry.path())) names.push_back(entry.path().string());
    std::sort(names.begin(), names.end());
    for (auto& n : names) {
      files_.push_back(std::move(n));
      labels_.push_back(static_cast<int64_t>(c));
    }
  }
  if (files_.empty())
    throw UsageError("--data " + root + ": the class folders hold no .jpg/.jpeg files");
}

}  // namespace tbd
