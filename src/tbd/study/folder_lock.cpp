#include "tbd/study/folder_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "tbd/core/error.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

std::string read_holder(int fd) {
  char buffer[512] = {0};
  if (::pread(fd, buffer, sizeof(buffer) - 1, 0) <= 0) return "";
  std::string text(buffer);  // zero-filled beyond what was read
  return text.substr(0, text.find('\n'));
}

}  // namespace

FolderLock::FolderLock(const std::string& dir, const std::string& command) {
  const std::string path = (fs::path(dir) / ".tbd.lock").string();
  // No O_CLOEXEC: child runs inherit the descriptor and with it the lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd_ < 0) throw Error("cannot create the lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = read_holder(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw Error("cannot lock " + path + ": " + std::strerror(err));
    // "PID COMMAND": a live PID is the other study; a dead one left a child run behind.
    const long pid = std::atol(holder.c_str());
    const bool alive = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
    const auto space = holder.find(' ');
    std::string who = "another tbd";
    if (pid > 0 && space != std::string::npos) {
      who = "`";
      who += holder.substr(space + 1);
      who += "` (pid " + std::to_string(pid) + ")";
    }
    if (alive)
      throw UsageError(dir + " is in use by " + who +
                       ", which writes its results there; wait for it to end, or "
                       "give --out another folder");
    throw UsageError(dir + " is in use by a run that " + who +
                     " started: that study is gone but its run "
                     "still writes into the folder (find it with `fuser " +
                     path +
                     "` and end it), or give --out "
                     "another folder");
  }
  const std::string me = std::to_string(::getpid()) + " " + command + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The lock holds without the note; only the message to a second study loses its detail.
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

void check_results_folder(const std::string& dir, const std::string& command) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError("--out " + dir + " is a file, but " + command +
                     " writes a results folder (index, results "
                     "and logs inside); give --out a folder name, e.g. " +
                     (fs::path(dir).parent_path() / (fs::path(dir).stem().string() + "-results")).string());
  // `--out sweep.json` would silently become a folder called sweep.json.
  if (fs::path(dir).extension() == ".json" && !fs::exists(dir, ec))
    throw UsageError("--out " + dir + " looks like a file name, but " + command +
                     " writes a results folder "
                     "(index.json, one result per run, logs); give a folder name, e.g. " +
                     (fs::path(dir).parent_path() / fs::path(dir).stem()).string());
}

void create_results_folder(const std::string& dir, const std::string& option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // create_directories reports success for a folder that already exists; the
  // lock file is the first thing written into it, so writability is checked here too.
  if (!ec && ::access(dir.c_str(), W_OK) != 0) ec = std::error_code(errno, std::generic_category());
  if (ec)
    throw UsageError(option + " " + dir + ": cannot create or write the folder (" + ec.message() + "); give " + option +
                     " a folder you can write, e.g. " + option + " results");
}

}  // namespace tbd
