// One suite or sweep at a time per results folder. Two studies writing the
// same folder would overwrite each other's results and index entries (the
// last writer of index.json wins), so a study locks the folder instead of
// merging: flock() on DIR/.tbd.lock, which also records who holds it.
//
// The lock's file descriptor is inherited by the study's child runs, so the
// folder stays locked while any of them lives, even if the study itself was
// killed: a later study then says that a foreign run still writes there.
#pragma once

#include <string>

namespace tbd {

class FolderLock {
 public:
  // Locks `dir` (which must exist) for `command` ("tbd suite ..."); throws
  // UsageError naming the holder when another live process holds it.
  FolderLock(const std::string& dir, const std::string& command);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Throws UsageError when `dir` exists and is not a folder (`--out file.json`).
void check_results_folder(const std::string& dir, const std::string& command);

// Creates `dir` (and its parents) for a study's results; `option` is the
// flag that named it ("--out", "--dir"). Throws UsageError naming the folder,
// the reason and the fix when it cannot be created (a read-only mount,
// /proc, a parent that is a file).
void create_results_folder(const std::string& dir, const std::string& option);

}  // namespace tbd
