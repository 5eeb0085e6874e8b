// An ImageNet-style folder: one sub-folder per class (sorted names give the
// class ids), JPEG files inside. Scanned once; files are read on demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

class ImageFolder {
 public:
  // Throws UsageError when the folder is missing, has no class folders, or
  // a class folder holds no JPEG file (it would still count as a class);
  // Error naming the path for a loop of symbolic links.
  explicit ImageFolder(const std::string& root);

  int64_t size() const { return static_cast<int64_t>(files_.size()); }
  int64_t classes() const { return static_cast<int64_t>(class_names_.size()); }
  const std::string& path(int64_t i) const { return files_[static_cast<size_t>(i)]; }
  int64_t label(int64_t i) const { return labels_[static_cast<size_t>(i)]; }
  const std::vector<std::string>& class_names() const { return class_names_; }

 private:
  std::vector<std::string> class_names_, files_;
  std::vector<int64_t> labels_;
};

}  // namespace tbd
