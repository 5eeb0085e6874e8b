#include "tbd/data/dataset_paths.h"

#include <string>
#include <system_error>

#include "tbd/core/error.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

PathKind kind_of(const fs::file_status& status, const std::error_code& ec, const fs::path& path) {
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw Error(path.string() +
                ": a loop of symbolic links (the link leads, through other links, back to "
                "itself); remove the link or point it at a real file or folder");
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw Error(path.string() + ": cannot be examined (" + ec.message() +
                "); check the permissions of it "
                "and of the folders above it");
  switch (status.type()) {
    case fs::file_type::regular: return PathKind::regular;
    case fs::file_type::directory: return PathKind::directory;
    case fs::file_type::not_found:
    case fs::file_type::none: return PathKind::missing;
    default: return PathKind::other;
  }
}

}  // namespace

PathKind path_kind(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  return kind_of(status, ec, path);
}

PathKind entry_kind(const fs::directory_entry& entry) {
  std::error_code ec;
  const fs::file_status status = entry.status(ec);
  return kind_of(status, ec, entry.path());
}

}  // namespace tbd
