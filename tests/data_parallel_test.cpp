// Data parallelism on real c10d (Gloo over loopback), with real processes:
// the test binary starts copies of itself as ranks through the same launcher
// `tbd run --nproc` uses, and compares against one process training on the
// whole batch.
#include <gtest/gtest.h>
#include <signal.h>

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include <cstdlib>
#include <map>

#include "tbd/core/error.h"
#include "tbd/core/phases.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/dist/process_group.h"
#include "tbd/measure/probes/comm_probe.h"
#include "tbd/nn/resnet.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {

constexpr int64_t kPerRankBatch = 4;
constexpr int kSteps = 4;

nn::ResNet tiny_resnet() {
  torch::manual_seed(1);
  nn::ResNetConfig c;
  c.width = 8;
  c.blocks = {1, 1, 1, 1};
  c.classes = 10;
  nn::ResNet model(c);
  // Batch norm in eval mode: its statistics would otherwise be taken over
  // each rank's half batch, which data parallelism (without SyncBN) does not
  // make equal to the whole batch. Everything else is the training step.
  model->eval();
  return model;
}

std::pair<torch::Tensor, torch::Tensor> whole_batch(int world) {
  torch::manual_seed(2);
  return {torch::randn({kPerRankBatch * world, 3, 32, 32}), torch::randint(10, {kPerRankBatch * world}, torch::kInt64)};
}

// Trains kSteps on `x, y` with `phases` (which may carry a gradient reducer).
void train(nn::ResNet& model, torch::optim::SGD& opt, Phases& phases, const torch::Tensor& x, const torch::Tensor& y) {
  for (int i = 0; i < kSteps; ++i) {
    auto forward = phases.forward();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    forward.end();
    phases.backward(loss);
    phases.optimizer_step(opt);
  }
}

torch::Tensor flat_parameters(nn::ResNet& model) {
  std::vector<torch::Tensor> all;
  for (const auto& p : model->parameters()) all.push_back(p.detach().reshape({-1}));
  return torch::cat(all);
}

// One rank of the run below; only active when the launcher started it.
TEST(DataParallelWorker, TrainsItsShard) {
  const char* out = std::getenv("TBD_TEST_OUT");
  if (!out || !std::getenv("RANK")) GTEST_SKIP() << "runs only as a rank of DataParallel.*";
  const DistEnvironment env = read_dist_environment();
  auto group = ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(60));
  auto model = tiny_resnet();
  std::vector<torch::Tensor> shared = model->parameters();
  if (env.rank != 0) {
    torch::NoGradGuard no_grad;
    for (auto& p : shared) p.add_(1.0);  // wrong on purpose: the broadcast must repair it
  }
  {
    torch::NoGradGuard no_grad;
    group->broadcast_from_rank0(shared);
  }
  const char* overlap_env = std::getenv("TBD_TEST_OVERLAP");
  const bool overlap = !overlap_env || std::string(overlap_env) == "on";
  // A small bucket size: several buckets, some launched during backward.
  GradientReducer reducer(model->parameters(), *group, 64 * 1024, overlap);
  Phases phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  phases.set_gradient_sync(&reducer);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto [x, y] = whole_batch(env.world_size);
  train(model, opt, phases, x.narrow(0, env.rank * kPerRankBatch, kPerRankBatch),
        y.narrow(0, env.rank * kPerRankBatch, kPerRankBatch));
  EXPECT_GT(reducer.bucket_count(), 1);
  const auto history = reducer.take_history();
  ASSERT_EQ(history.size(), static_cast<size_t>(kSteps));
  if (overlap) {
    EXPECT_GT(analyse_synchronisation(history.back()).hidden_s, 0.0);  // some buckets flew during backward
  }
  if (env.rank == 0) torch::save(flat_parameters(model), out);
}

// Workloads through their own training step, each rank on its part of one
// batch (the same on every rank: same seed, rank 0's stream), against one
// process on the whole batch.
//  - seq2seq at tiny scale, dropout off, with padding: its loss is summed
//    over target tokens and divided by sentences, so the mean of two
//    half-batch losses is the whole batch's loss; gradient clipping runs
//    after the all-reduce, on the global gradient, as with DDP. Sources keep
//    the whole batch's padding.
//  - dlrm at tiny scale: embedding tables with sparse gradients, which the
//    reducer all-reduces sparse, on their own, from the second iteration on
//    (the first learns which gradients are sparse and sends them densified).
//  - with TBD_TEST_ACCUM=N, each rank takes its part as N micro-batches of
//    one optimizer step (--grad-accum N): one all-reduce per step, of the
//    gradients accumulated over the N, gives the same update.
struct ShardCase {
  std::map<std::string, std::string> settings;
  int64_t per_rank = 3;
};

// "dlrm-dcnv2": dlrm with config=dcnv2 (multi-hot bags, Adagrad).
std::string registered_name(const std::string& workload) { return workload.substr(0, workload.find('-')); }

ShardCase shard_case(const std::string& workload) {
  if (workload == "seq2seq") return {{{"dropout", "0"}, {"max_gradient_norm", "1"}}, 3};
  if (workload == "dlrm-dcnv2") return {{{"config", "dcnv2"}}, 8};
  return {{}, 8};
}

torch::Tensor flat(const ParameterSet& s) {
  std::vector<torch::Tensor> all;
  for (const auto& w : s.weights) all.push_back(w.detach().reshape({-1}));
  return torch::cat(all);
}

TEST(DataParallelWorker, TrainsItsWorkloadShard) {
  const char* out = std::getenv("TBD_TEST_OUT");
  const char* workload = std::getenv("TBD_TEST_WORKLOAD");
  if (!out || !workload || !std::getenv("RANK")) GTEST_SKIP() << "runs only as a rank of DataParallel.*";
  const bool overlap = std::string(std::getenv("TBD_TEST_OVERLAP") ? std::getenv("TBD_TEST_OVERLAP") : "on") == "on";
  const DistEnvironment env = read_dist_environment();
  auto group = ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(60));
  const ShardCase c = shard_case(workload);
  testing::WorkloadUnderTest t(registered_name(workload), Scale::tiny, c.settings, c.per_rank * env.world_size);
  ParameterSet state = t.workload->state();
  {
    torch::NoGradGuard no_grad;
    group->broadcast_from_rank0(state.weights);
  }
  GradientReducer reducer(state.weights, *group, 16 * 1024, overlap);
  t.phases.set_gradient_sync(&reducer);
  const Batch whole = t.workload->next_batch();
  const bool bags = std::string(workload).starts_with("dlrm");
  const Batch mine = testing::batch_rows(whole, env.rank * c.per_rank, c.per_rank, bags);
  const int64_t accum = std::getenv("TBD_TEST_ACCUM") ? std::atoi(std::getenv("TBD_TEST_ACCUM")) : 1;
  ASSERT_EQ(c.per_rank % accum, 0);
  std::vector<Batch> micro;
  for (int64_t k = 0; k < accum; ++k)
    micro.push_back(testing::batch_rows(mine, k * c.per_rank / accum, c.per_rank / accum, bags));
  for (int i = 0; i < kSteps; ++i) t.step(micro);
  if (accum > 1) {
    EXPECT_EQ(reducer.take_history().size(), static_cast<size_t>(kSteps));  // one sync per step
  }
  if (bags && accum == 1) {
    const auto history = reducer.take_history();
    ASSERT_EQ(history.size(), static_cast<size_t>(kSteps));
    auto bytes = [](const CommIteration& it) {
      int64_t sum = 0;
      for (const auto& b : it.buckets) sum += b.bytes;
      return sum;
    };
    // The tables went on their own, as the rows looked up, not the whole tables.
    EXPECT_GT(history.back().buckets.size(), static_cast<size_t>(reducer.bucket_count()));
    EXPECT_LT(bytes(history.back()), bytes(history.front()) / 4);
  }
  if (env.rank == 0) torch::save(flat(t.workload->state()), out);
}

void expect_workload_two_ranks_match_one(const std::string& workload, const std::string& overlap, int accum = 1) {
  testing::TempDir dir;
  const std::string out = dir / "params.pt";
  setenv("TBD_TEST_OUT", out.c_str(), 1);
  setenv("TBD_TEST_WORKLOAD", workload.c_str(), 1);
  setenv("TBD_TEST_OVERLAP", overlap.c_str(), 1);
  setenv("TBD_TEST_ACCUM", std::to_string(accum).c_str(), 1);
  const int rc = run_local_workers({"tbd_tests", "--gtest_filter=DataParallelWorker.TrainsItsWorkloadShard"}, 2);
  unsetenv("TBD_TEST_OUT");
  unsetenv("TBD_TEST_WORKLOAD");
  unsetenv("TBD_TEST_OVERLAP");
  unsetenv("TBD_TEST_ACCUM");
  ASSERT_EQ(rc, 0);
  torch::Tensor distributed;
  torch::load(distributed, out);

  const ShardCase c = shard_case(workload);
  testing::WorkloadUnderTest t(registered_name(workload), Scale::tiny, c.settings, 2 * c.per_rank);
  const auto before = flat(t.workload->state()).clone();
  const Batch whole = t.workload->next_batch();
  if (workload == "seq2seq") ASSERT_GT(whole.inputs[0].size(1), whole.inputs[1].min().item<int64_t>());  // padded
  for (int i = 0; i < kSteps; ++i) t.step(whole);
  const auto single = flat(t.workload->state());
  EXPECT_FALSE(torch::allclose(before, single));
  EXPECT_TRUE(torch::allclose(distributed, single, 1e-4, 1e-5))
      << "max difference " << (distributed - single).abs().max().item<float>();
}

TEST(DataParallel, Seq2SeqWithPaddingTwoRanksMatchOneRank) { expect_workload_two_ranks_match_one("seq2seq", "on"); }
TEST(DataParallel, DlrmSparseGradientsTwoRanksMatchOneRankWithOverlap) {
  expect_workload_two_ranks_match_one("dlrm", "on");
}
TEST(DataParallel, DlrmSparseGradientsTwoRanksMatchOneRankWithoutOverlap) {
  expect_workload_two_ranks_match_one("dlrm", "off");
}
// Four micro-batches per step on each rank: the reducer's hooks stay idle
// until the last one and then send what .grad holds plus its gradient.
TEST(DataParallel, DlrmAccumulatedMicroBatchesTwoRanksMatchOneRankWithOverlap) {
  expect_workload_two_ranks_match_one("dlrm", "on", 4);
}
TEST(DataParallel, DlrmAccumulatedMicroBatchesTwoRanksMatchOneRankWithoutOverlap) {
  expect_workload_two_ranks_match_one("dlrm", "off", 4);
}
// Multi-hot bags and Adagrad's sparse row update (MLPerf's DLRMv2).
TEST(DataParallel, DlrmDcnV2MultiHotTwoRanksMatchOneRank) { expect_workload_two_ranks_match_one("dlrm-dcnv2", "on"); }

void expect_two_ranks_match_one(const std::string& overlap) {
  testing::TempDir dir;
  const std::string out = dir / "params.pt";
  setenv("TBD_TEST_OUT", out.c_str(), 1);
  setenv("TBD_TEST_OVERLAP", overlap.c_str(), 1);
  const int rc = run_local_workers({"tbd_tests", "--gtest_filter=DataParallelWorker.TrainsItsShard"}, 2);
  unsetenv("TBD_TEST_OUT");
  unsetenv("TBD_TEST_OVERLAP");
  ASSERT_EQ(rc, 0);
  torch::Tensor distributed;
  torch::load(distributed, out);

  auto model = tiny_resnet();
  Phases phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto [x, y] = whole_batch(2);
  const auto before = flat_parameters(model).clone();
  train(model, opt, phases, x, y);
  const auto single = flat_parameters(model);
  ASSERT_EQ(distributed.sizes(), single.sizes());
  EXPECT_FALSE(torch::allclose(before, single));  // training moved the weights
  EXPECT_TRUE(torch::allclose(distributed, single, 1e-4, 1e-5))
      << "max difference " << (distributed - single).abs().max().item<float>();
}

TEST(DataParallel, TwoRanksWithHalfBatchesMatchOneRankWithOverlap) { expect_two_ranks_match_one("on"); }
TEST(DataParallel, TwoRanksWithHalfBatchesMatchOneRankWithoutOverlap) { expect_two_ranks_match_one("off"); }

// A rank whose peer died must not die of SIGPIPE when it writes to the dead
// socket: joining a group ignores the signal (the write then fails with
// EPIPE, which the run reports as the lost rank).
TEST(DataParallel, JoiningAGroupIgnoresSigpipe) {
  ::signal(SIGPIPE, SIG_DFL);  // as a process starts (another test may have joined a group before)
  DistEnvironment env;
  env.world_size = 1;
  env.master_addr = "127.0.0.1";
  env.master_port = free_local_port();
  const auto group = ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(30));
  struct sigaction after {};
  sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
}

TEST(DataParallel, UnreachableRendezvousIsAClearError) {
  DistEnvironment env;
  env.rank = 1;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = free_local_port();  // nobody listens there
  const std::string msg =
      testing::error_of<Error>([&] { ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(2)); });
  EXPECT_NE(msg.find("could not join the rendezvous at 127.0.0.1:" + std::to_string(env.master_port)),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tbd
