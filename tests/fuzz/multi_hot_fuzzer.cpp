// MLPerf DLRMv2's multi-hot data through DLRM's reader: the input is a day's
// day_0_sparse_multi_hot.npz (zip central directory, ZIP64 records, .npy
// headers, ids), beside valid dense and labels files of 3 samples; two
// batches of 2, so the stream wraps.
#include <cstring>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/multi_hot_criteo.h"

namespace {

// A C-order .npy file of version 1.0.
std::string npy(const std::string& descr, const std::string& shape, const void* data, size_t bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    const std::vector<float> dense(3 * 13, 1.0f);
    const int32_t labels[3] = {0, 1, 0};
    tbd::fuzz::write_scratch("multi_hot/day_0_dense.npy", npy("<f4", "(3, 13)", dense.data(), dense.size() * 4));
    tbd::fuzz::write_scratch("multi_hot/day_0_labels.npy", npy("<i4", "(3, 1)", labels, sizeof labels));
    return (tbd::fuzz::scratch_dir() / "multi_hot").string();
  }();
  tbd::fuzz::write_scratch("multi_hot/day_0_sparse_multi_hot.npz", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] {
    const std::vector<int64_t> rows(26, 100), capped(26, 7);
    tbd::MultiHotCriteoBatches batches(folder, rows, capped, 2);
    for (int i = 0; i < 2; ++i) batches.next();
  });
  return 0;
}
