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

// A stand-in for the step's computation: 256x512x512 GEMMs at the run's
// threads, timed with every rank computing (rank 0's figure, so every rank
// runs the same counts and they stay in step).
class StandIn {
 public:
  StandIn(ProcessGroup& group, c10::Device device)
      : device_(device),
        a_(torch::randn({256, 512}, torch::TensorOptions().device(device))),
        b_(torch::randn({512, 512}, torch::TensorOptions().device(device))) {
    compute(20);
    group.barrier();
    const auto begin = std::chrono::steady_clock::now();
    compute(100);
    std::vector<torch::Tensor> per_gemm = {
        torch::tensor({std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() / 100},
                      torch::TensorOptions().dtype(torch::kDouble).device(device))};
    group.broadcast_from_rank0(per_gemm);
    per_gemm_s_ = per_gemm.front().cpu().item<double>();
  }
  int64_t gemms(double seconds) const { return std::max<int64_t>(0, std::llround(seconds / per_gemm_s_)); }
  void compute(int64_t gemms) {
    for (int64_t i = 0; i < gemms; ++i) (void)torch::mm(a_, b_);
    synchronize(device_);
  }

 private:
  c10::Device device_;
  torch::Tensor a_, b_;
  double per_gemm_s_ = 0;
};

// The whole communication of an iteration in context. On a shared host the
// all-reduces' Gloo threads and the kernel's loopback TCP take CPU time
// that the computation around them needed: timed alone, dlrm's sparse
// all-reduces cost its 2 ranks 3–5 ms, in the run about 7 (its GEMMs ran
// 45% slower than alone), and ncf's dense buckets exposed 6.0 ms in the
// replay where its ranks waited 9.1 (docs/metrics.md#prediction). So each
// cycle plays the step's schedule on the stand-in: the computation before
// backward, then each backward pass with its buckets' all-reduces launched
// at their ready times (in bucket order, as the reducer launches them) and
// its sparse gradients all-reduced stacked when it ends, every launch
// awaited; then the computation after. Blocks of cycles with and without
// the communication alternate, so drift cancels; the communication costs
// the difference of their means (throughput follows the mean, not the
// median).
nlohmann::json communication_in_context(ProcessGroup& group, c10::Device device, const StepSchedule& schedule,
                                        const std::vector<SparseGradient>& sparse) {
  std::vector<torch::Tensor> sparse_gradients;
  for (const auto& s : sparse) sparse_gradients.push_back(sparse_gradient(s, device));
  const auto all_reduce_sparse = [&] {
    std::vector<torch::Tensor> inputs;  // replaced by the sums
    for (const auto& g : sparse_gradients) inputs.push_back(g.clone());
    std::vector<torch::Tensor*> pointers;
    for (auto& t : inputs) pointers.push_back(&t);
    allreduce_sparse_gradients(group, pointers);
  };
  // One flat tensor per bucket of the first pass (every pass has the same buckets).
  std::vector<torch::Tensor> flats;
  if (!schedule.passes.empty())
    for (const auto& b : schedule.passes.front().buckets)
      flats.push_back(torch::ones({std::max<int64_t>(1, static_cast<int64_t>(b.bytes / 4))},
                                  torch::TensorOptions().dtype(torch::kFloat).device(device)));
  StandIn stand_in(group, device);
  const auto cycle = [&](bool communicate) {
    stand_in.compute(stand_in.gemms(schedule.before_s));
    for (const auto& pass : schedule.passes) {
      std::vector<std::shared_ptr<PendingReduce>> pending;
      int64_t done = 0;
      for (size_t i = 0; i < pass.buckets.size() && i < flats.size(); ++i) {
        const int64_t at = std::max(done, stand_in.gemms(pass.buckets[i].ready_s));
        stand_in.compute(at - done);
        done = at;
        if (communicate) pending.push_back(group.allreduce_sum(flats[i], {}));
      }
      stand_in.compute(std::max<int64_t>(0, stand_in.gemms(pass.backward_s) - done));
      if (communicate && pass.sparse && !sparse_gradients.empty()) all_reduce_sparse();
      for (auto& p : pending) p->wait();
      synchronize(device);
    }
    stand_in.compute(stand_in.gemms(schedule.after_s));
  };
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto since = [&](auto begin) { return std::chrono::duration<double>(now() - begin).count(); };

  cycle(true);  // warm-up: connections, allocations
  cycle(false);
  double step = 0;
  for (const auto* p : {&schedule.before_s, &schedule.after_s}) step += *p;
  for (const auto& pass : schedule.passes) step += pass.backward_s;
  // A quarter second of cycles per block (1 to 20 of them), 3 to 8 blocks of
  // each kind within about 24 s (with 3 blocks dlrm's sparse estimate
  // ranged 4.0–6.6 ms from process to process, with 8 5.6–7.1).
  const int cycles = std::clamp(static_cast<int>(0.25 / std::max(step, 1e-6)), 1, 20);
  const int blocks = std::clamp(static_cast<int>(24 / (2 * cycles * std::max(step, 1e-6))), 3, 8);
  const double timed = static_cast<double>(blocks * cycles);
  double alone = 0, with_communication = 0;
  for (int block = 0; block < blocks; ++block)
    for (bool with : {false, true}) {
      group.barrier();
      for (int c = 0; c < cycles; ++c) {
        const auto begin = now();
        cycle(with);
        (with ? with_communication : alone) += since(begin) / timed;
      }
    }
  // The communication back to back, for comparison: every bucket launched
  // at once, the sparse gradients beside them.
  const auto burst = [&] {
    std::vector<std::shared_ptr<PendingReduce>> pending;
    for (auto& f : flats) pending.push_back(group.allreduce_sum(f, {}));
    if (!sparse_gradients.empty()) all_reduce_sparse();
    for (auto& p : pending) p->wait();
    synchronize(device);
  };
  double back_to_back = 0, sparse_back_to_back = 0;
  group.barrier();
  for (int c = 0; c < 10; ++c) {
    const auto begin = now();
    for (size_t pass = 0; pass < std::max<size_t>(1, schedule.passes.size()); ++pass) burst();
    back_to_back += since(begin) / 10;
  }
  if (!sparse_gradients.empty()) {
    group.barrier();
    for (int c = 0; c < 10; ++c) {
      const auto begin = now();
      all_reduce_sparse();
      sparse_back_to_back += since(begin) / 10;
    }
  }
  return {{"seconds", std::max(0.0, with_communication - alone)},
          {"step_stand_in_seconds", alone},
          {"step_with_communication_seconds", with_communication},
          {"back_to_back_seconds", back_to_back},
          {"sparse_back_to_back_seconds",
           sparse_gradients.empty() ? nlohmann::json() : nlohmann::json(sparse_back_to_back)},
          {"blocks", blocks},
          {"cycles_per_block", cycles},
          {"definition",
           "the step's schedule played on a stand-in computation as long as the base's step (GEMMs, every "
           "rank at once), each bucket's all-reduce launched when its gradients are ready and the sparse "
           "gradients all-reduced when backward ends: mean cycle with the communication minus mean cycle "
           "without"}};
}

}  // namespace

nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device, const StepSchedule& schedule,
                                         const std::vector<SparseGradient>& sparse) {
  nlohmann::json allreduce = nlohmann::json::array();
  std::set<double> sizes;
  for (const auto& pass : schedule.passes)
    for (const auto& b : pass.buckets) sizes.insert(b.bytes);
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
  const nlohmann::json in_context = communication_in_context(group, device, schedule, sparse);
  if (group.rank() != 0) return nlohmann::json();
  return {{"ranks", group.size()},
          {"backend", group.backend_name()},
          {"allreduce", allreduce},
          {"in_context", in_context},
          {"sparse_gradients", sparse.size()}};
}

}  // namespace tbd
