#include "tbd/data/multi_hot_criteo.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/core/workload.h"
#include "tbd/data/batch_pool.h"
#include "tbd/data/criteo.h"
#include "tbd/data/embedding_bags.h"

namespace tbd {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSparseSuffix = "_sparse_multi_hot.npz";

// Element `index` of an int32 or int64 array, checked at open.
int64_t integer_at(const NpyArray& a, int64_t index) {
  const unsigned char* p = a.data + index * a.item_size;
  if (a.item_size == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A label (int32, int64 or float32) as 0 or 1; -1 for anything else.
float label_at(const NpyArray& a, int64_t index) {
  double v;
  if (a.dtype == "<f4") {
    float f;
    std::memcpy(&f, a.data + index * 4, 4);
    v = f;
  } else {
    v = static_cast<double>(integer_at(a, index));
  }
  return v == 0.0 || v == 1.0 ? static_cast<float>(v) : -1.0f;
}

}  // namespace

bool MultiHotCriteoBatches::is_dataset(const std::string& path) {
  std::error_code error;
  if (!fs::is_directory(path, error)) return false;
  for (const auto& entry : fs::directory_iterator(path, error))
    if (entry.path().filename().string().ends_with(kSparseSuffix)) return true;
  return false;
}

MultiHotCriteoBatches::MultiHotCriteoBatches(const std::string& folder, std::vector<int64_t> published_rows,
                                             std::vector<int64_t> table_sizes, int64_t batch_size, Shard shard)
    : published_rows_(std::move(published_rows)),
      table_sizes_(std::move(table_sizes)),
      batch_size_(batch_size),
      shard_(shard) {
  std::vector<std::string> prefixes;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(kSparseSuffix)) prefixes.push_back(name.substr(0, name.size() - std::strlen(kSparseSuffix)));
  }
  if (error) throw UsageError("--data " + folder + ": cannot list the folder (" + error.message() + ")");
  if (prefixes.empty())
    throw UsageError("--data " + folder + ": no *" + kSparseSuffix +
                     " file (MLPerf DLRMv2's multi-hot days: day_N_dense.npy, day_N_labels.npy, day_N" + kSparseSuffix +
                     ")");
  std::sort(prefixes.begin(), prefixes.end());
  const size_t features = published_rows_.size();
  for (const auto& prefix : prefixes) {
    const std::string base = (fs::path(folder) / prefix).string();
    for (const std::string& path : {base + "_dense.npy", base + "_labels.npy"})
      if (!fs::is_regular_file(path, error))
        throw UsageError("--data " + folder + ": " + path + " is missing (each day needs its dense, labels and " +
                         "sparse_multi_hot files)");
    Day d(base + "_dense.npy", base + "_labels.npy", base + kSparseSuffix);
    d.dense = parse_npy(d.dense_file.data(), d.dense_file.size(), d.dense_path);
    d.labels = parse_npy(d.labels_file.data(), d.labels_file.size(), d.labels_path);
    if (d.dense.dtype != "<f4" || d.dense.shape.size() != 2 || d.dense.shape[1] != kCriteoDense)
      throw Error(d.dense_path + ": expected float32 [rows, 13] dense features, found " + d.dense.dtype + " of " +
                  std::to_string(d.dense.shape.size()) + " dimensions" +
                  (d.dense.shape.size() == 2
                       ? " [" + std::to_string(d.dense.shape[0]) + ", " + std::to_string(d.dense.shape[1]) + "]"
                       : ""));
    const int64_t rows = d.dense.rows();
    if ((d.labels.dtype != "<i4" && d.labels.dtype != "<i8" && d.labels.dtype != "<f4") || d.labels.shape.empty() ||
        d.labels.rows() != rows || d.labels.row_elements() != 1)
      throw Error(d.labels_path + ": expected " + std::to_string(rows) +
                  " labels (int32, int64 or float32, [rows] or [rows, 1]) to match " + d.dense_path);
    auto members = parse_npz(d.sparse_file.data(), d.sparse_file.size(), d.sparse_path);
    for (size_t k = 0; k < features; ++k) {
      const std::string member = std::to_string(k) + ".npy";
      const auto found = members.find(member);
      if (found == members.end())
        throw Error(d.sparse_path + ": member " + member + " (feature " + std::to_string(k) + ") is missing; " +
                    std::to_string(features) + " features expected");
      const NpyArray& a = found->second;
      const std::string where = d.sparse_path + " member " + member;
      if (a.dtype != "<i4" && a.dtype != "<i8") throw Error(where + ": ids must be int32 (or int64), found " + a.dtype);
      if (a.shape.size() != 2 || a.rows() != rows)
        throw Error(where + ": expected [" + std::to_string(rows) + ", multi-hot size] ids to match " + d.dense_path);
      if (a.shape[1] == 0)
        throw Error(where + ": bags of 0 ids; the format gives every sample a fixed number of ids (at least 1)");
      if (multi_hot_sizes_.size() == k) multi_hot_sizes_.push_back(a.shape[1]);
      if (multi_hot_sizes_[k] != a.shape[1])
        throw Error(where + ": " + std::to_string(a.shape[1]) + " ids per sample, where " + days_.front().sparse_path +
                    " has " + std::to_string(multi_hot_sizes_[k]) + "; every day must share the multi-hot sizes");
      d.features.push_back(a);
    }
    d.first_sample = samples_;
    samples_ += rows;
    days_.push_back(std::move(d));
  }
  if (samples_ == 0) throw UsageError("--data " + folder + ": the days hold no samples");
}

void MultiHotCriteoBatches::read_sample(int64_t sample, MultiHotBatch& b, int64_t row) const {
  const auto day =
      std::upper_bound(days_.begin(), days_.end(), sample, [](int64_t s, const Day& d) { return s < d.first_sample; }) -
      1;
  const int64_t i = sample - day->first_sample;
  std::memcpy(b.dense[row].data_ptr<float>(), day->dense.data + i * kCriteoDense * 4, kCriteoDense * 4);
  const float label = label_at(day->labels, i);
  if (label < 0) throw Error(day->labels_path + ", sample " + std::to_string(i) + ": a label other than 0 or 1");
  b.labels[row] = label;
  for (size_t k = 0; k < day->features.size(); ++k) {
    const NpyArray& a = day->features[k];
    int64_t* out = b.ids[k][row].data_ptr<int64_t>();
    for (int64_t j = 0; j < a.shape[1]; ++j) {
      const int64_t id = integer_at(a, i * a.shape[1] + j);
      if (id < 0 || id >= published_rows_[k])
        throw Error(day->sparse_path + " member " + std::to_string(k) + ".npy, sample " + std::to_string(i) + ": id " +
                    std::to_string(id) + " is outside feature " + std::to_string(k) + "'s table of " +
                    std::to_string(published_rows_[k]) + " rows");
      out[j] = id % table_sizes_[k];
    }
  }
}

MultiHotBatch MultiHotCriteoBatches::next() {
  MultiHotBatch b;
  b.dense = torch::empty({batch_size_, kCriteoDense});
  b.labels = torch::empty({batch_size_});
  for (int64_t size : multi_hot_sizes_) b.ids.push_back(torch::empty({batch_size_, size}, torch::kInt64));
  const int64_t first = shard_.global_batch(next_local_++) * batch_size_;
  for (int64_t row = 0; row < batch_size_; ++row) read_sample((first + row) % samples_, b, row);
  return b;
}

Batch to_training_batch(const MultiHotBatch& b, c10::Device device) {
  Batch batch;
  batch.inputs = fixed_size_bags(b.ids, device);
  batch.inputs.insert(batch.inputs.begin(), to_device(b.dense, device));
  batch.targets = {to_device(b.labels, device)};
  batch.samples = b.labels.size(0);
  return batch;
}

}  // namespace tbd
