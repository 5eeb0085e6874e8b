// NumPy's array files, read in place from a mapped file: .npy (a magic
// string, a version, a Python-dict header with dtype, order and shape, then
// the raw elements) and .npz (np.savez: a zip archive of .npy members,
// stored uncompressed, ZIP64 where large). MLPerf's DLRMv2 data is these:
// day_N_dense.npy, day_N_labels.npy and day_N_sparse_multi_hot.npz.
// Formats: numpy.lib.format's NEP 1 and PKWARE's APPNOTE (central directory,
// ZIP64 end records and extra fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tbd {

struct NpyArray {
  std::string dtype;                    // little-endian only: "<f4", "<i4", "<i8", "|u1", ...
  std::vector<int64_t> shape;           // C order (Fortran order is refused)
  const unsigned char* data = nullptr;  // the first element, inside the caller's bytes
  int64_t item_size = 0;                // bytes per element, from dtype

  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  int64_t row_elements() const;  // the product of the shape after the first dimension
};

// Throws Error naming `where` (a path, "file.npz member 3.npy") when the
// bytes are not a whole C-order, little-endian .npy array.
NpyArray parse_npy(const unsigned char* data, size_t size, const std::string& where);

// The .npy members of an .npz archive by their names ("0.npy"). Throws Error
// naming `where` on a damaged archive or a compressed member
// (np.savez_compressed), whose elements cannot be read in place.
std::map<std::string, NpyArray> parse_npz(const unsigned char* data, size_t size, const std::string& where);

}  // namespace tbd
