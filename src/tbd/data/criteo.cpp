#include "tbd/data/criteo.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tbd/core/error.h"
#include "tbd/data/batch_pool.h"
#include "tbd/data/dataset_paths.h"
#include "tbd/data/embedding_bags.h"

namespace tbd {

void parse_criteo_line(const std::string& line, const std::string& where, const std::vector<int64_t>& table_sizes,
                       CriteoBatch& batch, int64_t row) {
  constexpr int kFields = 1 + kCriteoDense + kCriteoSparse;
  std::vector<std::string> f;
  f.reserve(kFields);
  size_t start = 0;
  for (;;) {
    const auto tab = line.find('\t', start);
    f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  if (f.size() != kFields)
    throw Error(where + ": expected " + std::to_string(kFields) + " tab-separated fields (label, " +
                "13 integers, 26 hex ids), got " + std::to_string(f.size()));
  if (f[0] != "0" && f[0] != "1") throw Error(where + ": label must be 0 or 1, got '" + f[0] + "'");
  batch.labels.accessor<float, 1>()[row] = f[0] == "1" ? 1.0f : 0.0f;
  auto dense = batch.dense.accessor<float, 2>();
  for (int j = 0; j < kCriteoDense; ++j) {
    const std::string& s = f[static_cast<size_t>(1 + j)];
    long long v = 0;
    if (!s.empty()) {
      char* end = nullptr;
      errno = 0;
      v = std::strtoll(s.c_str(), &end, 10);
      if (errno != 0 || *end != '\0')
        throw Error(where + ": integer feature " + std::to_string(j + 1) + " is '" + s + "', not an integer");
    }
    dense[row][j] = std::log1p(static_cast<float>(v < 0 ? 0 : v));
  }
  auto sparse = batch.sparse.accessor<int64_t, 2>();
  for (int j = 0; j < kCriteoSparse; ++j) {
    const std::string& s = f[static_cast<size_t>(1 + kCriteoDense + j)];
    unsigned long long v = 0;
    if (!s.empty()) {
      char* end = nullptr;
      errno = 0;
      v = std::strtoull(s.c_str(), &end, 16);
      if (errno != 0 || *end != '\0' || s.size() > 16 || s[0] == '-' || s[0] == '+')
        throw Error(where + ": categorical feature " + std::to_string(j + 1) + " is '" + s + "', not a hex id");
    }
    sparse[row][j] = static_cast<int64_t>(v % static_cast<unsigned long long>(table_sizes[static_cast<size_t>(j)]));
  }
}

namespace {

// Checked before the pipeline thread starts reading.
std::ifstream open_criteo(const std::string& path) {
  // A loop of symbolic links, a folder or a device is named for what it is, not "no such file".
  switch (path_kind(path)) {
    case PathKind::directory:
      throw UsageError("--data " + path +
                       " is a folder without MLPerf DLRMv2's multi-hot days (day_N_sparse_multi_hot.npz with "
                       "day_N_dense.npy and day_N_labels.npy); give such a folder, or a Criteo TSV file itself (e.g. " +
                       path + "/train.txt)");
    case PathKind::other: throw UsageError("--data " + path + " is a device, pipe or socket, not a Criteo TSV file");
    case PathKind::missing:
    case PathKind::regular: break;
  }
  std::ifstream in(path);
  if (!in) throw UsageError("--data " + path + ": no such file (expected a Criteo TSV file)");
  if (in.peek() == std::ifstream::traits_type::eof()) throw UsageError("--data " + path + ": the file is empty");
  return in;
}

}  // namespace

CriteoBatches::CriteoBatches(std::string path, std::vector<int64_t> table_sizes, int64_t batch_size, Shard shard)
    : path_(std::move(path)),
      table_sizes_(std::move(table_sizes)),
      batch_size_(batch_size),
      in_(open_criteo(path_)),
      shard_(shard),
      // One worker: batches are cut from the file in order, so item i is
      // always lines i·B … i·B+B−1 (mod the file's length).
      prefetcher_([this](int64_t b) { return make(b); }, 1, 4) {}

CriteoBatch CriteoBatches::make(int64_t) {
  CriteoBatch b;
  b.dense = torch::empty({batch_size_, kCriteoDense});
  b.sparse = torch::empty({batch_size_, kCriteoSparse}, torch::kInt64);
  b.labels = torch::empty({batch_size_});
  std::string line;
  for (int64_t row = 0; row < batch_size_;) {
    if (!std::getline(in_, line)) {
      if (data_lines_in_pass_ == 0) throw Error(path_ + ": no data lines (only blank ones)");
      if (rows_in_pass_ == 0)
        throw Error(path_ + ": " + std::to_string(data_lines_in_pass_) + " data lines cannot give each of " +
                    std::to_string(shard_.world) + " ranks a row; use a larger file or fewer processes");
      rows_in_pass_ = 0;
      data_lines_in_pass_ = 0;
      in_.clear();  // end of the file: the next epoch starts
      in_.seekg(0);
      line_number_ = 0;
      continue;
    }
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (data_lines_in_pass_++ % shard_.world != shard_.rank) continue;  // another rank's row
    parse_criteo_line(line, path_ + ":" + std::to_string(line_number_), table_sizes_, b, row);
    ++row;
    ++rows_in_pass_;
  }
  return b;
}

Batch to_training_batch(const CriteoBatch& b, c10::Device device) {
  Batch batch;
  // One id per table and sample: bags of one.
  std::vector<torch::Tensor> columns = b.sparse.split(1, 1);
  batch.inputs = fixed_size_bags(columns, device);
  batch.inputs.insert(batch.inputs.begin(), to_device(b.dense, device));
  batch.targets = {to_device(b.labels, device)};
  batch.samples = b.labels.size(0);
  return batch;
}

}  // namespace tbd
