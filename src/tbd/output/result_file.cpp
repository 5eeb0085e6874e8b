#include "tbd/output/result_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"

namespace tbd {
namespace fs = std::filesystem;

void check_output_path(const std::string& path) {
  if (path.empty()) throw UsageError("--out needs a file name");
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec) || path.back() == '/')
    throw UsageError("--out " + path + " is a folder; this command writes one file: give a file name such as " +
                     (p / "result.json").string());
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("--out " + path + ": folder " + dir.string() + " does not exist; create it first (mkdir -p " +
                     dir.string() + ")");
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError("--out " + path + ": folder " + dir.string() + " is not writable");
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  const auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    // Absolute first: weakly_canonical leaves a relative name relative when its first part does not exist.
    const auto norm = [&ec](const std::string& p) {
      return std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
    };
    return norm(a) == norm(b);
  };
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() && same_file(outputs[i].second, outputs[j].second))
        throw UsageError(outputs[i].first + " and " + outputs[j].first + " both name " + outputs[j].second +
                         ", so one would overwrite the other; give each output its own file");
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const AbandonDeferred whole_file_or_none;  // a third Ctrl-C ends the process after the rename
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write " + path + ": " + std::strerror(err) + " (the file was left untouched)");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(err) + " (the file was left untouched)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(err) + " (the file was left untouched)");
  }
}

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_file_atomically(path, document.dump(2) + "\n");
}

}  // namespace tbd
