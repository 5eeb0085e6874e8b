#include "tbd/data/movielens.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <random>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/data/batch_pool.h"
#include "tbd/data/dataset_paths.h"

namespace tbd {
namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const auto end = line.find(sep, start);
    fields.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return fields;
    start = end + 1;
  }
}

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

// A finite number: "nan" and "inf" parse as doubles but are no rating.
bool parse_real(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(v);
}

constexpr const char* kHeader = "userId,movieId,rating,timestamp";

// MovieLens's header, letter case and surrounding spaces aside.
bool is_ratings_header(const std::vector<std::string>& fields) {
  static const char* expected[] = {"userid", "movieid", "rating", "timestamp"};
  if (fields.size() != 4) return false;
  for (size_t i = 0; i < 4; ++i) {
    std::string f = fields[i];
    f.erase(0, f.find_first_not_of(" \t\""));
    f.erase(f.find_last_not_of(" \t\"") + 1);
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (f != expected[i]) return false;
  }
  return true;
}

// Dense indices 0..n-1 for the distinct raw ids, in increasing raw order.
int64_t densify(std::vector<int64_t>& ids) {
  std::vector<int64_t> distinct = ids;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::unordered_map<int64_t, int64_t> index;
  index.reserve(distinct.size());
  for (size_t i = 0; i < distinct.size(); ++i) index.emplace(distinct[i], static_cast<int64_t>(i));
  for (auto& id : ids) id = index.at(id);
  return static_cast<int64_t>(distinct.size());
}

}  // namespace

MovieLensRatings::MovieLensRatings(const std::string& path) {
  switch (path_kind(path)) {
    case PathKind::regular: break;
    case PathKind::missing: throw UsageError("--data " + path + ": no such file (expected a MovieLens ratings.csv)");
    case PathKind::directory: {
      const std::string inside = (std::filesystem::path(path) / "ratings.csv").string();
      throw UsageError("--data " + path + " is a folder; ncf reads one MovieLens ratings file (" + kHeader +
                       " lines), such as " + inside +
                       (path_kind(inside) == PathKind::regular ? ": give --data " + inside : std::string()));
    }
    case PathKind::other:
      throw UsageError("--data " + path +
                       ": not a regular file (a device, pipe or socket); expected a MovieLens "
                       "ratings.csv");
  }
  std::ifstream in(path);
  if (!in) throw UsageError("--data " + path + ": cannot be opened (expected a MovieLens ratings.csv)");
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    // strtoll stops at a NUL as at the end of the text, so "12<NUL>junk" read as 12.
    if (const auto nul = line.find('\0'); nul != std::string::npos)
      throw Error(where + ": a NUL byte at column " + std::to_string(nul + 1) +
                  "; a ratings file is text: the file is corrupt or not MovieLens ratings");
    const auto f = split(line, ',');
    int64_t user = 0, item = 0, timestamp = 0;
    if (number == 1 && !f.empty() && !parse_int(f[0], user)) {  // a header: its columns must be MovieLens's
      if (!is_ratings_header(f))
        throw Error(where + ": header '" + line + "' is not the MovieLens ratings header " + kHeader +
                    "; ncf reads user, item, rating and timestamp in that column order: reorder the columns "
                    "to match, or correct the header");
      continue;
    }
    if (f.size() != 4)
      throw Error(where + ": expected 4 comma-separated fields `user,item,rating,timestamp`, got " +
                  std::to_string(f.size()));
    if (!parse_int(f[0], user) || user < 0) throw Error(where + ": bad user id '" + f[0] + "'");
    if (!parse_int(f[1], item) || item < 0) throw Error(where + ": bad item id '" + f[1] + "'");
    if (!parse_real(f[2])) throw Error(where + ": bad rating '" + f[2] + "'");
    if (!parse_int(f[3], timestamp)) throw Error(where + ": bad timestamp '" + f[3] + "'");
    user_.push_back(user);
    item_.push_back(item);
  }
  if (user_.empty()) throw Error(path + ": no ratings in the file");
  users_ = densify(user_);
  items_ = densify(item_);

  // Per-user sorted item lists, for the negative sampler's membership test.
  user_begin_.assign(static_cast<size_t>(users_ + 1), 0);
  for (int64_t u : user_) ++user_begin_[static_cast<size_t>(u + 1)];
  for (size_t u = 1; u < user_begin_.size(); ++u) user_begin_[u] += user_begin_[u - 1];
  rated_items_.resize(user_.size());
  std::vector<int64_t> fill(user_begin_.begin(), user_begin_.end() - 1);
  for (size_t i = 0; i < user_.size(); ++i)
    rated_items_[static_cast<size_t>(fill[static_cast<size_t>(user_[i])]++)] = item_[i];
  for (int64_t u = 0; u < users_; ++u)
    std::sort(rated_items_.begin() + user_begin_[static_cast<size_t>(u)],
              rated_items_.begin() + user_begin_[static_cast<size_t>(u + 1)]);
}

bool MovieLensRatings::rated(int64_t user, int64_t item) const {
  const auto b = rated_items_.begin() + user_begin_[static_cast<size_t>(user)];
  const auto e = rated_items_.begin() + user_begin_[static_cast<size_t>(user + 1)];
  return std::binary_search(b, e, item);
}

InteractionBatches::InteractionBatches(std::shared_ptr<const MovieLensRatings> ratings, int64_t batch_size,
                                       int64_t negatives, uint64_t seed, int workers, Shard shard)
    : ratings_(std::move(ratings)),
      batch_size_(batch_size),
      negatives_(negatives),
      seed_(seed),
      order_(ratings_->size(), seed),
      prefetcher_([this, shard](int64_t b) { return make(shard.global_batch(b)); }, workers, 2 * workers) {}

InteractionBatch InteractionBatches::make(int64_t batch_index) {
  InteractionBatch b;
  b.users = torch::empty({batch_size_}, torch::kInt64);
  b.items = torch::empty({batch_size_}, torch::kInt64);
  b.labels = torch::empty({batch_size_});
  auto users = b.users.accessor<int64_t, 1>();
  auto items = b.items.accessor<int64_t, 1>();
  auto labels = b.labels.accessor<float, 1>();
  std::uniform_int_distribution<int64_t> any_item(0, ratings_->items() - 1);
  for (int64_t i = 0; i < batch_size_; ++i) {
    const int64_t position = batch_index * batch_size_ + i;
    const int64_t positive = order_.item(position / (1 + negatives_));
    const int64_t user = ratings_->user(positive);
    users[i] = user;
    if (position % (1 + negatives_) == 0) {
      items[i] = ratings_->item(positive);
      labels[i] = 1;
      continue;
    }
    // Rejection sampling; a user who rated (nearly) every item keeps the
    // last draw rather than loop forever.
    std::mt19937_64 rng(derive_seed(seed_, static_cast<uint64_t>(position)));
    int64_t item = any_item(rng);
    for (int attempt = 0; attempt < 100 && ratings_->rated(user, item); ++attempt) item = any_item(rng);
    items[i] = item;
    labels[i] = 0;
  }
  return b;
}

Batch to_training_batch(const InteractionBatch& b, c10::Device device) {
  Batch batch;
  batch.inputs = {to_device(b.users, device), to_device(b.items, device)};
  batch.targets = {to_device(b.labels, device)};
  batch.samples = b.users.size(0);
  return batch;
}

}  // namespace tbd
