#include "tbd/predict/bucket_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include <torch/torch.h>

#include "tbd/core/statistics.h"
#include "tbd/data/embedding_bags.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/sharded_embedding_bags.h"
#include "tbd/dist/sparse_allreduce.h"
#include "tbd/measure/machine/device.h"
#include "tbd/nn/dlrm.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/embedding_exchange.h"
#include "tbd/predict/sharded_step.h"

namespace tbd {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point begin) { return std::chrono::duration<double>(Clock::now() - begin).count(); }

// One collective alone among the ranks: the median of five (after two to
// warm up), each started after a barrier and awaited, device included.
double median_alone(ProcessGroup& group, c10::Device device,
                    const std::function<std::shared_ptr<PendingReduce>()>& launch) {
  std::vector<double> seconds;
  for (int rep = 0; rep < 7; ++rep) {
    group.barrier();
    const auto begin = Clock::now();
    launch()->wait();
    synchronize(device);
    if (rep >= 2) seconds.push_back(seconds_since(begin));
  }
  return percentile(seconds, 0.5);
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
    const auto begin = Clock::now();
    compute(100);
    std::vector<torch::Tensor> per_gemm = {
        torch::tensor({seconds_since(begin) / 100}, torch::TensorOptions().dtype(torch::kDouble).device(device))};
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

// The communication's cost in context: blocks of cycles of the step with
// and without it alternate (so drift cancels), every rank at once. The
// estimate is the median over block pairs of (with − without): a pair is
// adjacent in time, so the machine's drift cancels within it, and the
// median keeps one disturbed block (this VM's scheduler hiccups) from
// moving it, where the difference of all blocks' means let one disturbed
// block move the transformer's estimate from 86 ms to below zero
// (docs/metrics.md#prediction).
struct InContext {
  static constexpr const char* kEstimate =
      "the median over adjacent block pairs of (mean cycle with the communication − mean cycle without)";
  std::vector<double> alone, with_communication;  // each block's mean cycle, seconds
  int cycles = 0;
  double seconds() const {
    std::vector<double> differences;
    for (size_t i = 0; i < alone.size() && i < with_communication.size(); ++i)
      differences.push_back(with_communication[i] - alone[i]);
    return differences.empty() ? 0.0 : std::max(0.0, percentile(differences, 0.5));
  }
  nlohmann::json json() const {
    return {{"seconds", seconds()},
            {"step_stand_in_seconds", mean_of(alone)},
            {"step_with_communication_seconds", mean_of(with_communication)},
            {"block_stand_in_seconds", alone},
            {"block_with_communication_seconds", with_communication},
            {"blocks", alone.size()},
            {"cycles_per_block", cycles}};
  }
};

// `cycle(communicate)` plays one step; `step_s` is its length without
// communication. A quarter second of cycles per block (1 to 20 of them), 3
// to 8 pairs within about 24 s (with 3 blocks dlrm's sparse estimate ranged
// 4.0–6.6 ms from process to process, with 8 5.6–7.1).
InContext alternate_blocks(ProcessGroup& group, double step_s, const std::function<void(bool)>& cycle) {
  InContext out;
  out.cycles = std::clamp(static_cast<int>(0.25 / std::max(step_s, 1e-6)), 1, 20);
  const int blocks = std::clamp(static_cast<int>(24 / (2 * out.cycles * std::max(step_s, 1e-6))), 3, 8);
  for (int block = 0; block < blocks; ++block)
    for (bool with : {false, true}) {
      group.barrier();
      const auto begin = Clock::now();
      for (int c = 0; c < out.cycles; ++c) cycle(with);
      (with ? out.with_communication : out.alone).push_back(seconds_since(begin) / out.cycles);
    }
  return out;
}

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
// awaited; then the computation after (alternate_blocks gives its cost).
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
  cycle(true);  // warm-up: connections, allocations
  cycle(false);
  double step = 0;
  for (const auto* p : {&schedule.before_s, &schedule.after_s}) step += *p;
  for (const auto& pass : schedule.passes) step += pass.backward_s;
  const InContext measured = alternate_blocks(group, step, cycle);
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
    const auto begin = Clock::now();
    for (size_t pass = 0; pass < std::max<size_t>(1, schedule.passes.size()); ++pass) burst();
    back_to_back += seconds_since(begin) / 10;
  }
  if (!sparse_gradients.empty()) {
    group.barrier();
    for (int c = 0; c < 10; ++c) {
      const auto begin = Clock::now();
      all_reduce_sparse();
      sparse_back_to_back += seconds_since(begin) / 10;
    }
  }
  nlohmann::json out = measured.json();
  out["back_to_back_seconds"] = back_to_back;
  out["sparse_back_to_back_seconds"] =
      sparse_gradients.empty() ? nlohmann::json() : nlohmann::json(sparse_back_to_back);
  out["definition"] =
      std::string(
          "the step's schedule played on a stand-in computation as long as the base's step (GEMMs, every rank at "
          "once), each bucket's all-reduce launched when its gradients are ready and the sparse gradients "
          "all-reduced when backward ends: ") +
      InContext::kEstimate;
  return out;
}

// The buffers of one collective of a sharded step: an all-reduce's flat,
// a reduce-scatter's whole input and slice output, an all-gather's slice
// input and whole output (bytes: the whole buffer, padded to the ranks).
class CollectiveBuffers {
 public:
  CollectiveBuffers(const StepCollective& c, int ranks, c10::Device device) : kind_(c.kind) {
    const auto on = torch::TensorOptions().dtype(torch::kFloat).device(device);
    const int64_t slice = std::max<int64_t>(1, static_cast<int64_t>(c.bytes / 4) / ranks);
    whole_ = torch::ones({slice * ranks}, on);
    slice_ = torch::ones({slice}, on);
  }
  std::shared_ptr<PendingReduce> launch(ProcessGroup& group) {
    switch (kind_) {
      case CollectiveKind::reduce_scatter: return group.reduce_scatter_sum(slice_, whole_);
      case CollectiveKind::all_gather: return group.allgather_into(whole_, slice_);
      case CollectiveKind::all_reduce: break;
    }
    return group.allreduce_sum(whole_, {});
  }

 private:
  CollectiveKind kind_;
  torch::Tensor whole_, slice_;
};

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
    const double seconds = median_alone(group, device, [&] { return group.allreduce_sum(flat, [] {}); });
    allreduce.push_back({{"bytes", bytes}, {"seconds", seconds}});
  }
  const nlohmann::json in_context = communication_in_context(group, device, schedule, sparse);
  if (group.rank() != 0) return nlohmann::json();
  return {{"ranks", group.size()},
          {"backend", group.backend_name()},
          {"allreduce", allreduce},
          {"in_context", in_context},
          {"sparse_gradients", sparse.size()}};
}

// Passes timed per placement (after two to warm up): the placed pass's time
// moves by milliseconds with where the ranks meet at its all-to-alls.
constexpr int kLookupPasses = 11;

nlohmann::json measure_placed_lookups(ProcessGroup& group, c10::Device device, const EmbeddingLookups& lookups,
                                      EmbeddingSharding how) {
  nn::DLRMConfig config = nn::dlrm_config(lookups.config);
  config.table_sizes = lookups.table_sizes;
  config.lookups = lookups.lookups;
  config.embedding_dim = lookups.dim;
  // The rank's own bags, as dlrm's synthetic data draws them.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(0x10c4ull + static_cast<uint64_t>(group.rank()));
  std::vector<std::vector<torch::Tensor>> bags;
  for (int k = 0; k < 3; ++k) {
    std::vector<torch::Tensor> ids;
    for (size_t t = 0; t < config.table_sizes.size(); ++t)
      ids.push_back(power_law_ids(config.table_sizes[t], lookups.batch * config.lookups[t], lookups.skew, generator)
                        .view({lookups.batch, config.lookups[t]}));
    bags.push_back(fixed_size_bags(ids, device));
  }
  // Forward and backward of the pooled rows, the tables' gradients dropped
  // after each pass, as a step's zeroing does. The rows' gradients are
  // dense tensors, as the model's interaction hands them back: the
  // broadcast gradient of a sum (stride 0) would send embedding-bag
  // backward down a path 5-10 times slower (3 against 16-37 ms for rm1's
  // eight tables at small scale, measured).
  const auto median_pass = [&](torch::nn::Module& tables,
                               const std::function<std::vector<torch::Tensor>(at::TensorList)>& pool) {
    std::vector<double> seconds;
    for (int rep = 0; rep < 2 + kLookupPasses; ++rep) {
      group.barrier();
      const auto begin = Clock::now();
      const std::vector<torch::Tensor> rows = pool(bags[static_cast<size_t>(rep) % bags.size()]);
      std::vector<torch::Tensor> gradients;
      for (const auto& r : rows) gradients.push_back(torch::ones_like(r));
      torch::autograd::backward(rows, gradients);
      synchronize(device);
      if (rep >= 2) seconds.push_back(seconds_since(begin));
      for (auto& p : tables.parameters()) p.mutable_grad().reset();
    }
    return percentile(seconds, 0.5);
  };
  double placed = 0, replicated = 0;
  {
    ShardedEmbeddingBags sharded(config, how, group);
    sharded->to(device);
    placed = median_pass(*sharded, [&](at::TensorList b) { return sharded->pooled(b); });
  }
  {
    torch::nn::ModuleList whole;
    for (int64_t rows : config.table_sizes)
      whole->push_back(torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(rows, config.embedding_dim)
                                                   .mode(torch::kSum)
                                                   .sparse(config.sparse_gradients)));
    whole->to(device);
    replicated = median_pass(*whole, [&](at::TensorList b) {
      std::vector<torch::Tensor> out;
      for (size_t t = 0; t < whole->size(); ++t)
        out.push_back(whole->ptr<torch::nn::EmbeddingBagImpl>(t)->forward(b[2 * t], b[2 * t + 1]));
      return out;
    });
  }
  // Rank 0's figures, for every rank.
  std::vector<torch::Tensor> figures = {
      torch::tensor({placed, replicated}, torch::TensorOptions().dtype(torch::kDouble).device(device))};
  group.broadcast_from_rank0(figures);
  const auto host = figures.front().cpu();
  return {{"placed_s", host[0].item<double>()}, {"replicated_s", host[1].item<double>()}};
}

nlohmann::json measure_sharded_collectives(ProcessGroup& group, c10::Device device, const ShardedStep& step) {
  std::vector<CollectiveBuffers> buffers;
  for (const auto& c : step.collectives) buffers.emplace_back(c, group.size(), device);
  // Each distinct collective alone, as the replay uses them.
  nlohmann::json alone = nlohmann::json::array();
  std::set<std::pair<CollectiveKind, double>> timed;
  for (size_t i = 0; i < step.collectives.size(); ++i) {
    const auto& c = step.collectives[i];
    if (!timed.insert({c.kind, c.bytes}).second) continue;
    const double seconds = median_alone(group, device, [&] { return buffers[i].launch(group); });
    alone.push_back({{"kind", to_string(c.kind)}, {"bytes", c.bytes}, {"seconds", seconds}});
  }
  // The step's program on the stand-in: its computation, and with the
  // communication its launches and waits.
  StandIn stand_in(group, device);
  const auto cycle = [&](bool communicate) {
    std::vector<std::shared_ptr<PendingReduce>> pending(step.collectives.size());
    double planned = 0;  // seconds of computation the program has reached
    int64_t done = 0;    // GEMMs run for it
    for (const auto& a : step.actions) switch (a.type) {
        case StepAction::Type::compute: {
          planned += a.seconds;
          const int64_t due = stand_in.gemms(planned);
          stand_in.compute(due - done);
          done = due;
          break;
        }
        case StepAction::Type::launch:
          if (communicate) pending[a.collective] = buffers[a.collective].launch(group);
          break;
        case StepAction::Type::wait:
          if (communicate) pending[a.collective]->wait();
          break;
      }
    synchronize(device);
  };
  cycle(true);  // warm-up: connections, allocations
  cycle(false);
  const InContext measured = alternate_blocks(group, step.compute_s, cycle);
  if (group.rank() != 0) return nlohmann::json();
  nlohmann::json in_context = measured.json();
  in_context["definition"] = std::string(
                                 "the sharded step's program (sharded_step.h) played on a stand-in computation as "
                                 "long as the base's step (GEMMs, every rank at once), each collective launched and "
                                 "awaited where the step launches and awaits it: ") +
                             InContext::kEstimate;
  return {
      {"ranks", group.size()}, {"backend", group.backend_name()}, {"collectives", alone}, {"in_context", in_context}};
}

}  // namespace tbd
