// A whole file mapped read-only into memory (mmap). Pages come from the page
// cache when first touched and are shared with every other process reading
// the file, so a token file of many gigabytes costs neither a copy nor a read
// at start-up. The mapping lives as long as the object (RAII: munmap in the
// destructor). A file shrunk by someone else while mapped makes a later read
// fault (SIGBUS), as for any mmap reader: data files must not change during
// a run.
#pragma once

#include <cstddef>
#include <string>

namespace tbd {

class MappedFile {
 public:
  // Throws Error naming the path when it cannot be opened or mapped. An
  // empty file maps to no bytes (mmap refuses length 0).
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void unmap();
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tbd
