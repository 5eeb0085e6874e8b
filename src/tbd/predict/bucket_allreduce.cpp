#include "tbd/predict/bucket_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <torch/torch.h>

#include "tbd/dist/process_group.h"
#include "tbd/dist/sparse_allreduce.h"
#include "tbd/measure/machine/device.h"
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

// The sparse all-reduces in context, as a rank of the run meets them. They
// leave when backward ends, beside the last bucket's all-reduce, and on a
// shared host their Gloo threads' and the kernel's work spills into the
// computation around them: timed back to back they cost dlrm's 2 ranks
// 3–5 ms, in the run about 7 (docs/metrics.md#prediction). So each cycle
// is a stand-in computation as long as the base's step (GEMMs at the run's
// threads, every rank at once) followed by the burst: the last bucket's
// all-reduce launched, the sparse gradients all-reduced stacked
// (sparse_allreduce.h), the bucket awaited. Blocks of cycles with and
// without the burst alternate, so drift cancels; the burst costs the
// difference of their means (throughput follows the mean, not the median).
nlohmann::json sparse_allreduce_in_context(ProcessGroup& group, c10::Device device, double last_bucket_bytes,
                                           const std::vector<SparseGradient>& sparse, double step_seconds) {
  std::vector<torch::Tensor> gradients;
  for (const auto& s : sparse) gradients.push_back(sparse_gradient(s, device));
  auto flat = torch::ones({std::max<int64_t>(1, static_cast<int64_t>(last_bucket_bytes / 4))},
                          torch::TensorOptions().dtype(torch::kFloat).device(device));
  const auto burst = [&] {
    std::shared_ptr<PendingReduce> bucket;
    if (last_bucket_bytes > 0) bucket = group.allreduce_sum(flat, {});
    std::vector<torch::Tensor> inputs;  // replaced by the sums
    for (const auto& g : gradients) inputs.push_back(g.clone());
    std::vector<torch::Tensor*> pointers;
    for (auto& t : inputs) pointers.push_back(&t);
    allreduce_sparse_gradients(group, pointers);
    if (bucket) bucket->wait();
  };
  const auto a = torch::randn({256, 512}, torch::TensorOptions().device(device));
  const auto b = torch::randn({512, 512}, torch::TensorOptions().device(device));
  const auto compute = [&](int64_t gemms) {
    for (int64_t i = 0; i < gemms; ++i) (void)torch::mm(a, b);
    synchronize(device);
  };
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto since = [&](auto begin) { return std::chrono::duration<double>(now() - begin).count(); };

  // GEMMs for one step, timed with every rank computing; the same count on
  // every rank (rank 0's), so the ranks stay in step.
  burst();  // warm-up: connections, allocations
  compute(20);
  group.barrier();
  auto begin = now();
  compute(100);
  const double per_gemm = since(begin) / 100;
  std::vector<torch::Tensor> count = {torch::tensor({std::max<int64_t>(1, std::llround(step_seconds / per_gemm))})};
  group.broadcast_from_rank0(count);
  const int64_t gemms = count.front().item<int64_t>();

  // 8 blocks of each kind, each a quarter second of stand-in, 5 to 20
  // cycles (with 3 blocks dlrm's estimate ranged 4.0–6.6 ms from process to
  // process, with 8 5.6–7.1).
  constexpr int kBlocks = 8;
  const int cycles = std::clamp(static_cast<int>(0.25 / std::max(gemms * per_gemm, 1e-6)), 5, 20);
  const double timed = static_cast<double>(kBlocks * cycles);
  double alone = 0, with_burst = 0;
  for (int block = 0; block < kBlocks; ++block)
    for (bool with : {false, true}) {
      group.barrier();
      for (int c = 0; c <= cycles; ++c) {  // the first cycle of a block warms up
        begin = now();
        compute(gemms);
        if (with) burst();
        if (c > 0) (with ? with_burst : alone) += since(begin) / timed;
      }
    }
  // The burst back to back, for comparison.
  double back_to_back = 0;
  group.barrier();
  for (int c = 0; c < 10; ++c) {
    begin = now();
    burst();
    back_to_back += since(begin) / 10;
  }
  return {{"seconds", std::max(0.0, with_burst - alone)},
          {"step_stand_in_seconds", alone},
          {"step_with_allreduce_seconds", with_burst},
          {"back_to_back_seconds", back_to_back},
          {"last_bucket_bytes", last_bucket_bytes},
          {"definition",
           "the sparse all-reduces (stacked) launched with the last bucket's all-reduce after a stand-in "
           "computation as long as the base's step (GEMMs, every rank at once): mean cycle with them minus "
           "mean cycle without"}};
}

}  // namespace

nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes,
                                         const std::vector<SparseGradient>& sparse, double step_seconds) {
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
  const nlohmann::json in_context =
      sparse.empty() ? nlohmann::json()
                     : sparse_allreduce_in_context(group, device, bucket_bytes.empty() ? 0.0 : bucket_bytes.back(),
                                                   sparse, step_seconds);
  if (group.rank() != 0) return nlohmann::json();
  return {{"ranks", group.size()},
          {"backend", group.backend_name()},
          {"allreduce", allreduce},
          {"sparse_allreduce", in_context},
          {"sparse_gradients", sparse.size()}};
}

}  // namespace tbd
