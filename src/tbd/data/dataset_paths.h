// What a --data path (or an entry found inside a data set folder) is,
// following symbolic links. std::filesystem's throwing calls would end a run
// with "filesystem error: Too many levels of symbolic links"; these throw a
// tbd::Error that names the path and says what to do.
#pragma once

#include <filesystem>

namespace tbd {

enum class PathKind {
  missing,    // nothing there (or a dangling symbolic link)
  regular,    // a regular file
  directory,  // a folder
  other,      // a device, pipe or socket (/dev/null, a FIFO)
};

// Throws Error naming the path for a loop of symbolic links or a path that
// cannot be examined (permission denied on a parent folder).
PathKind path_kind(const std::filesystem::path& path);
PathKind entry_kind(const std::filesystem::directory_entry& entry);

}  // namespace tbd
