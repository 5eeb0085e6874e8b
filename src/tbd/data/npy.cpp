#include "tbd/data/npy.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tbd/core/error.h"

namespace tbd {
namespace {

uint64_t little_endian(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The value text after `'key':` in the header dict, up to the next top-level comma or brace.
std::string header_value(const std::string& header, const std::string& key, const std::string& where) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) throw Error(where + ": not a NumPy .npy file (its header has no '" + key + "')");
  auto colon = header.find(':', at);
  if (colon == std::string::npos) throw Error(where + ": damaged .npy header (no value for '" + key + "')");
  size_t begin = header.find_first_not_of(' ', colon + 1);
  if (begin == std::string::npos) throw Error(where + ": damaged .npy header (no value for '" + key + "')");
  size_t end = begin;
  if (header[begin] == '(') {
    end = header.find(')', begin);
    if (end == std::string::npos) throw Error(where + ": damaged .npy header (unclosed shape)");
    return header.substr(begin, end + 1 - begin);
  }
  if (header[begin] == '\'') {
    end = header.find('\'', begin + 1);
    if (end == std::string::npos) throw Error(where + ": damaged .npy header (unclosed string)");
    return header.substr(begin + 1, end - begin - 1);
  }
  end = header.find_first_of(",}", begin);
  if (end == std::string::npos) throw Error(where + ": damaged .npy header");
  return header.substr(begin, end - begin);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& where) {
  std::vector<int64_t> shape;
  size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    int64_t v = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
        throw Error(where + ": .npy shape " + text + " is too large");
      v = v * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) throw Error(where + ": damaged .npy shape " + text);
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

int64_t NpyArray::row_elements() const {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

NpyArray parse_npy(const unsigned char* data, size_t size, const std::string& where) {
  static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(data, magic, sizeof magic) != 0)
    throw Error(where + ": not a NumPy .npy file (no \\x93NUMPY magic)");
  const int major = data[6];
  if (major < 1 || major > 3)
    throw Error(where + ": .npy format version " + std::to_string(major) + " is not 1, 2 or 3");
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (size < 8 + length_bytes) throw Error(where + ": .npy file ends inside its header");
  const uint64_t header_length = little_endian(data + 8, static_cast<int>(length_bytes));
  const size_t start = 8 + length_bytes;
  if (header_length > size - start) throw Error(where + ": .npy file ends inside its header");
  const std::string header(reinterpret_cast<const char*>(data + start), header_length);

  NpyArray a;
  a.dtype = header_value(header, "descr", where);
  if (header_value(header, "fortran_order", where) != "False")
    throw Error(where + ": a Fortran-order array; write it in C order (np.ascontiguousarray)");
  a.shape = parse_shape(header_value(header, "shape", where), where);
  if (a.dtype.size() < 3 || (a.dtype[0] != '<' && a.dtype[0] != '|'))
    throw Error(where + ": dtype " + a.dtype + " is not little-endian");
  a.item_size = 0;
  for (size_t i = 2; i < a.dtype.size(); ++i) {
    if (a.dtype[i] < '0' || a.dtype[i] > '9' || a.item_size > 1024) throw Error(where + ": unknown dtype " + a.dtype);
    a.item_size = a.item_size * 10 + (a.dtype[i] - '0');
  }
  if (a.item_size == 0) throw Error(where + ": unknown dtype " + a.dtype);
  // Elements × item size, checked against the bytes that follow the header.
  const uint64_t available = size - start - header_length;
  const bool empty = std::find(a.shape.begin(), a.shape.end(), int64_t{0}) != a.shape.end();
  uint64_t bytes = static_cast<uint64_t>(a.item_size);
  for (int64_t d : a.shape) {
    if (empty) break;  // no elements: nothing to fit
    if (bytes > available / static_cast<uint64_t>(d))
      throw Error(where + ": the .npy file is shorter than its shape says (truncated?)");
    bytes *= static_cast<uint64_t>(d);
  }
  a.data = data + start + header_length;
  return a;
}

namespace {

struct ZipRecordReader {
  const unsigned char* data;
  size_t size;
  const std::string& where;
  uint64_t at(uint64_t offset, int bytes) const {
    if (offset > size || static_cast<uint64_t>(bytes) > size - offset)
      throw Error(where + ": damaged .npz archive (a record points past the end of the file)");
    return little_endian(data + offset, bytes);
  }
};

}  // namespace

std::map<std::string, NpyArray> parse_npz(const unsigned char* data, size_t size, const std::string& where) {
  const ZipRecordReader z{data, size, where};
  // The end-of-central-directory record: the last 22 bytes, or earlier by a comment.
  if (size < 22) throw Error(where + ": not a NumPy .npz file (too short to be a zip archive)");
  int64_t eocd = -1;
  const int64_t lowest = static_cast<int64_t>(size) - 22 - 65535;
  for (int64_t i = static_cast<int64_t>(size) - 22; i >= 0 && i >= lowest; --i)
    if (z.at(static_cast<uint64_t>(i), 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0) throw Error(where + ": not a NumPy .npz file (no zip end-of-central-directory record)");
  uint64_t entries = z.at(eocd + 10, 2), directory = z.at(eocd + 16, 4);
  if (entries == 0xFFFF || directory == 0xFFFFFFFF) {
    // ZIP64: a locator just before the record points at the ZIP64 end record.
    if (eocd < 20 || z.at(eocd - 20, 4) != 0x07064b50)
      throw Error(where + ": damaged .npz archive (ZIP64 sizes without a ZIP64 locator)");
    const uint64_t end64 = z.at(eocd - 20 + 8, 8);
    if (z.at(end64, 4) != 0x06064b50) throw Error(where + ": damaged .npz archive (no ZIP64 end record)");
    entries = z.at(end64 + 32, 8);
    directory = z.at(end64 + 48, 8);
  }
  std::map<std::string, NpyArray> members;
  uint64_t p = directory;
  for (uint64_t e = 0; e < entries; ++e) {
    if (z.at(p, 4) != 0x02014b50) throw Error(where + ": damaged .npz archive (a central directory entry is missing)");
    const uint64_t method = z.at(p + 10, 2);
    uint64_t compressed = z.at(p + 20, 4), local = z.at(p + 42, 4);
    const uint64_t uncompressed32 = z.at(p + 24, 4);
    const uint64_t name_length = z.at(p + 28, 2), extra_length = z.at(p + 30, 2), comment_length = z.at(p + 32, 2);
    if (p + 46 + name_length > size) throw Error(where + ": damaged .npz archive (a member name runs past the end)");
    const std::string name(reinterpret_cast<const char*>(data + p + 46), name_length);
    // ZIP64 extra field: 8-byte values for each 32-bit field set to 0xFFFFFFFF, in order.
    for (uint64_t x = p + 46 + name_length; x + 4 <= p + 46 + name_length + extra_length;) {
      const uint64_t id = z.at(x, 2), length = z.at(x + 2, 2);
      if (id == 0x0001) {
        uint64_t f = x + 4;
        if (uncompressed32 == 0xFFFFFFFF) f += 8;
        if (compressed == 0xFFFFFFFF) compressed = z.at(f, 8), f += 8;
        if (local == 0xFFFFFFFF) local = z.at(f, 8);
      }
      x += 4 + length;
    }
    if (method != 0)
      throw Error(where + ": member " + name +
                  " is compressed (np.savez_compressed); tbd reads arrays in place: write the file with np.savez, as "
                  "MLPerf's materialize_synthetic_multihot_dataset.py does");
    if (z.at(local, 4) != 0x04034b50) throw Error(where + ": damaged .npz archive (member " + name + " has no header)");
    const uint64_t start = local + 30 + z.at(local + 26, 2) + z.at(local + 28, 2);
    if (start > size || compressed > size - start)
      throw Error(where + ": damaged .npz archive (member " + name + " runs past the end of the file)");
    members[name] = parse_npy(data + start, static_cast<size_t>(compressed), where + " member " + name);
    p += 46 + name_length + extra_length + comment_length;
  }
  return members;
}

}  // namespace tbd
