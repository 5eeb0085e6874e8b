#include "tbd/dist/sparse_allreduce.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "tbd/dist/process_group.h"

namespace tbd {

namespace {

int64_t bytes_of(const torch::Tensor& g) {
  return g._indices().numel() * static_cast<int64_t>(g._indices().element_size()) +
         g._values().numel() * static_cast<int64_t>(g._values().element_size());
}

// One collective: `members` stacked along their rows (or the one gradient itself).
struct Flight {
  std::vector<torch::Tensor*> members;
  std::vector<int64_t> offsets;  // first row of each member in the stack
  torch::Tensor stacked;
  std::shared_ptr<PendingReduce> pending;
};

Flight launch(ProcessGroup& group, std::vector<torch::Tensor*> members) {
  Flight f;
  f.members = std::move(members);
  if (f.members.size() == 1) {
    f.stacked = *f.members.front();
  } else {
    std::vector<torch::Tensor> indices, values;
    int64_t rows = 0;
    for (auto* g : f.members) {
      f.offsets.push_back(rows);
      indices.push_back(g->_indices() + rows);
      values.push_back(g->_values());
      rows += g->size(0);
    }
    std::vector<int64_t> sizes = f.members.front()->sizes().vec();
    sizes[0] = rows;
    f.stacked = torch::sparse_coo_tensor(torch::cat(indices, 1), torch::cat(values, 0), sizes);
  }
  f.pending = group.allreduce_sum(f.stacked, {});
  return f;
}

// The summed stack back into its members: the rows of each, re-based.
void split(Flight& f) {
  if (f.members.size() == 1) {
    *f.members.front() = f.stacked;
    return;
  }
  const torch::Tensor sum = f.stacked.is_coalesced() ? f.stacked : f.stacked.coalesce();
  const torch::Tensor rows = sum._indices()[0], values = sum._values();
  std::vector<int64_t> starts = f.offsets;
  starts.push_back(sum.size(0));
  const auto bounds_tensor = torch::searchsorted(rows, torch::tensor(starts, rows.options())).cpu();
  const auto bounds = bounds_tensor.accessor<int64_t, 1>();
  for (size_t k = 0; k < f.members.size(); ++k) {
    const int64_t lo = bounds[static_cast<int64_t>(k)], hi = bounds[static_cast<int64_t>(k) + 1];
    *f.members[k] = torch::sparse_coo_tensor((rows.slice(0, lo, hi) - f.offsets[k]).unsqueeze(0),
                                             values.slice(0, lo, hi), f.members[k]->sizes())
                        ._coalesced_(true);  // sorted and unique: a slice of a coalesced tensor
  }
}

}  // namespace

int64_t allreduce_sparse_gradients(ProcessGroup& group, std::vector<torch::Tensor*> gradients) {
  // Stackable: one sparse dimension (rows); grouped by dtype and row shape,
  // in first-seen order (the same on every rank).
  std::vector<std::pair<std::string, std::vector<torch::Tensor*>>> groups;
  int64_t bytes = 0;
  for (auto* g : gradients) {
    bytes += bytes_of(*g);
    std::string key;
    if (g->sparse_dim() == 1) {
      key = std::string(c10::toString(g->scalar_type())) + "@" + g->device().str();
      for (int64_t d = 1; d < g->dim(); ++d) key += "x" + std::to_string(g->size(d));
    } else {
      key = "alone " + std::to_string(groups.size());
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
    it->second.push_back(g);
  }
  std::vector<Flight> flights;
  for (auto& [key, members] : groups) flights.push_back(launch(group, members));
  for (auto& f : flights) {
    f.pending->wait();
    split(f);
  }
  return bytes;
}

}  // namespace tbd
