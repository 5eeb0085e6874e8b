#include "tbd/predict/bucket_allreduce.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <torch/torch.h>

#include "tbd/dist/process_group.h"
#include "tbd/dist/sparse_allreduce.h"
#include "tbd/measure/device.h"
#include "tbd/predict/data_parallel_model.h"

namespace tbd {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A gradient as an embedding table's backward makes it: `entries` looked-up
// rows (repeats included, not coalesced), a value row each.
torch::Tensor sparse_gradient(const SparseGradient& s, c10::Device device) {
  const auto entries = std::max<int64_t>(0, static_cast<int64_t>(std::llround(s.entries)));
  const auto on = torch::TensorOptions().device(device);
  return torch::sparse_coo_tensor(torch::randint(s.rows, {1, entries}, on.dtype(torch::kLong)),
                                  torch::randn({entries, s.row_elements}, on.dtype(torch::kFloat)),
                                  {s.rows, s.row_elements});
}

double sparse_allreduce_seconds(ProcessGroup& group, c10::Device device, const std::vector<SparseGradient>& sparse) {
  if (sparse.empty()) return 0;
  std::vector<torch::Tensor> gradients;
  for (const auto& s : sparse) gradients.push_back(sparse_gradient(s, device));
  std::vector<double> seconds;
  for (int rep = 0; rep < 7; ++rep) {   // two to warm up, five timed
    std::vector<torch::Tensor> inputs;  // replaced by the sums
    for (const auto& g : gradients) inputs.push_back(g.clone());
    std::vector<torch::Tensor*> pointers;
    for (auto& t : inputs) pointers.push_back(&t);
    group.barrier();
    const auto begin = std::chrono::steady_clock::now();
    allreduce_sparse_gradients(group, pointers);  // as the reducer does
    if (rep >= 2) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  return median(seconds);
}

}  // namespace

nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes,
                                         const std::vector<SparseGradient>& sparse) {
  nlohmann::json allreduce = nlohmann::json::array();
  const std::set<double> sizes(bucket_bytes.begin(), bucket_bytes.end());
  for (double bytes : sizes) {
    auto flat = torch::ones({std::max<int64_t>(1, static_cast<int64_t>(bytes / 4))},
                            torch::TensorOptions().dtype(torch::kFloat).device(device));
    std::vector<double> seconds;
    for (int rep = 0; rep < 7; ++rep) {  // two to warm up, five timed
      group.barrier();
      const auto begin = std::chrono::steady_clock::now();
      group.allreduce_sum(flat, [] {})->wait();
      synchronize(device);
      if (rep >= 2) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
    allreduce.push_back({{"bytes", bytes}, {"seconds", median(seconds)}});
  }
  const double sparse_seconds = sparse_allreduce_seconds(group, device, sparse);
  if (group.rank() != 0) return nlohmann::json();
  return {{"ranks", group.size()},
          {"backend", group.backend_name()},
          {"allreduce", allreduce},
          {"sparse_allreduce_seconds", sparse_seconds},
          {"sparse_gradients", sparse.size()}};
}

}  // namespace tbd
