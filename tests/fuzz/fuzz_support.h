// Shared by the readers' fuzz targets (libFuzzer's LLVMFuzzerTestOneInput
// interface; scripts/fuzz builds them with clang, tests/fuzz/replay.cpp
// replays their seeds and past findings in the normal test suite).
//
// The contract a target checks: a reader given any bytes either returns or
// throws tbd::Error (UsageError included), the exception whose message the
// CLI prints with the file named. Any other exception escapes the target and
// libFuzzer reports it like a crash, as it reports crashes, hangs (-timeout),
// memory blow-ups (-rss_limit_mb) and the sanitizers' findings.
#pragma once

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "tbd/core/error.h"

namespace tbd::fuzz {

// A folder of this process's own (libFuzzer's -jobs/-fork run several
// processes), removed when the process ends normally.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "tbd-fuzz-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) std::abort();
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// Writes the bytes to `relative` under the scratch folder (parents made) and
// returns the full path.
inline std::string write_scratch(const std::string& relative, std::string_view bytes) {
  const auto path = scratch_dir() / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();  // the scratch disk is full: nothing a reader did
  return path.string();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs a reader; tbd::Error is the documented way to refuse input.
template <typename Read>
void expect_value_or_error(Read&& read) {
  try {
    read();
  } catch (const tbd::Error&) {
  }
}

}  // namespace tbd::fuzz
