// Replays inputs through the fuzz targets without libFuzzer: every file of
// the folders given (missing folders are skipped), in name order, so the
// seeds and every finding of past fuzzing runs are checked by the normal
// test suite. A target that throws anything but tbd::Error fails here as it
// does under libFuzzer; a crash fails the test by itself.
//
//   fuzz_replay TARGET FOLDER_OR_FILE...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using FuzzTarget = int (*)(const uint8_t*, size_t);

extern "C" {
int tbd_fuzz_audio(const uint8_t*, size_t);
int tbd_fuzz_byte_text(const uint8_t*, size_t);
int tbd_fuzz_criteo(const uint8_t*, size_t);
int tbd_fuzz_jpeg(const uint8_t*, size_t);
int tbd_fuzz_librispeech(const uint8_t*, size_t);
int tbd_fuzz_movielens(const uint8_t*, size_t);
int tbd_fuzz_multi_hot(const uint8_t*, size_t);
int tbd_fuzz_parallel_text(const uint8_t*, size_t);
int tbd_fuzz_pascal_voc(const uint8_t*, size_t);
int tbd_fuzz_result(const uint8_t*, size_t);
int tbd_fuzz_token_file(const uint8_t*, size_t);
}

int main(int argc, char** argv) {
  const std::map<std::string, FuzzTarget> targets = {
      {"audio", tbd_fuzz_audio},         {"byte_text", tbd_fuzz_byte_text},         {"criteo", tbd_fuzz_criteo},
      {"jpeg", tbd_fuzz_jpeg},           {"librispeech", tbd_fuzz_librispeech},     {"movielens", tbd_fuzz_movielens},
      {"multi_hot", tbd_fuzz_multi_hot}, {"parallel_text", tbd_fuzz_parallel_text}, {"pascal_voc", tbd_fuzz_pascal_voc},
      {"result", tbd_fuzz_result},       {"token_file", tbd_fuzz_token_file}};
  const auto target = argc >= 2 ? targets.find(argv[1]) : targets.end();
  if (target == targets.end()) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET FOLDER_OR_FILE...; TARGET is one of:");
    for (const auto& [name, _] : targets) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 2; i < argc; ++i) {
    const fs::path path = argv[i];
    if (fs::is_regular_file(path)) inputs.push_back(path);
    if (!fs::is_directory(path)) continue;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file()) inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz_replay: no inputs for %s\n", argv[1]);
    return 1;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      target->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_replay %s: %s threw an exception other than tbd::Error: %s\n", argv[1], path.c_str(),
                   e.what());
      return 1;
    }
  }
  std::printf("fuzz_replay %s: %zu inputs, none escaped tbd::Error\n", argv[1], inputs.size());
  return 0;
}
