// Sharded data parallelism (ZeRO-1/2/3) on real c10d (Gloo over loopback),
// with real processes started by the launcher `tbd run --nproc` uses: each
// rank trains the same workload twice from the same weights on the same
// batches, once replicated (the gradient reducer, DDP's way) and once
// sharded, and the weights must agree; the shard layout's rules are pure
// functions tested here too.
#include <gtest/gtest.h>

#include <torch/serialize.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tbd/core/rng.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/shard_layout.h"
#include "tbd/dist/sharded_data_parallel.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {

std::vector<GradientShape> shapes(const std::vector<int64_t>& elements) {
  std::vector<GradientShape> s;
  for (int64_t e : elements) s.push_back({.elements = e, .element_size = 4, .kind = "Float@cpu"});
  return s;
}

// Every element of every parameter is owned by exactly one rank, at the
// place the flat bucket puts it, and every rank's slice is the same size.
TEST(ShardLayout, EveryElementHasExactlyOneOwner) {
  const std::vector<int64_t> elements = {7, 1, 30, 5, 64, 3, 11};
  for (int ranks : {1, 2, 3, 4, 8}) {
    std::vector<std::vector<int>> owners;
    for (int64_t e : elements) owners.emplace_back(e, 0);
    for (int rank = 0; rank < ranks; ++rank) {
      const auto buckets = shard_buckets(shapes(elements), /*bucket_bytes=*/120, ranks, rank);
      for (const auto& b : buckets) {
        EXPECT_EQ(b.padded % ranks, 0);
        EXPECT_GE(b.padded, b.elements);
        EXPECT_LT(b.padded - b.elements, ranks);
        EXPECT_EQ(b.shard * ranks, b.padded);
        for (const auto& p : b.pieces) {
          const auto member = std::find(b.members.begin(), b.members.end(), p.param) - b.members.begin();
          ASSERT_LT(member, static_cast<long>(b.members.size()));
          // The piece sits in the rank's slice where the flat bucket has it.
          EXPECT_EQ(b.offsets[member] + p.param_offset, rank * b.shard + p.shard_offset);
          EXPECT_LE(p.shard_offset + p.length, b.shard);
          for (int64_t i = p.param_offset; i < p.param_offset + p.length; ++i) ++owners[p.param][i];
        }
      }
    }
    for (size_t k = 0; k < elements.size(); ++k)
      for (int64_t i = 0; i < elements[k]; ++i) ASSERT_EQ(owners[k][i], 1) << ranks << " ranks, param " << k;
  }
}

TEST(ShardLayout, BucketsAreTheAllReducesBuckets) {
  const auto sharded = shard_buckets(shapes({10, 20, 30, 40}), 200, 2, 1);
  const auto replicated = assign_gradient_buckets(shapes({10, 20, 30, 40}), 200);
  ASSERT_EQ(sharded.size(), replicated.size());
  for (size_t b = 0; b < sharded.size(); ++b) EXPECT_EQ(sharded[b].members, replicated[b]);
}

TEST(ShardLayout, RefusesARankOutsideTheGroup) {
  EXPECT_THROW(shard_buckets(shapes({4}), 100, 2, 2), std::invalid_argument);
  EXPECT_THROW(shard_buckets(shapes({4}), 100, 0, 0), std::invalid_argument);
}

constexpr int kSteps = 5;

std::map<std::string, std::string> settings_for(const std::string& workload) {
  // Learning rates that move the weights within five steps (the schedules'
  // warm-ups would otherwise keep them near zero); clipping stays at the
  // workloads' defaults (gpt and llama clip at 1.0).
  if (workload == "llama") return {{"warmup_steps", "0"}};
  if (workload == "transformer") return {{"warmup_steps", "1"}, {"lr_factor", "0.1"}};
  return {};
}

torch::Tensor flat(const ParameterSet& s) {
  std::vector<torch::Tensor> all;
  for (const auto& w : s.weights) all.push_back(w.detach().reshape({-1}));
  return torch::cat(all);
}

int64_t bytes(const std::vector<torch::Tensor>& tensors) {
  int64_t sum = 0;
  for (const auto& t : tensors) sum += t.numel() * static_cast<int64_t>(t.element_size());
  return sum;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// One rank of the runs below; only active when the launcher started it.
TEST(ShardedDataParallelWorker, TrainsLikeTheReplicatedRun) {
  const char* out = std::getenv("TBD_TEST_OUT");
  const char* workload = std::getenv("TBD_TEST_WORKLOAD");
  if (!out || !workload || !std::getenv("RANK")) GTEST_SKIP() << "runs only as a rank of ShardedDataParallel.*";
  const Sharding stage = parse_sharding(env_or("TBD_TEST_SHARDING", "gradients"));
  const bool overlap = env_or("TBD_TEST_OVERLAP", "on") == "on";
  const int64_t accum = std::stoll(env_or("TBD_TEST_ACCUM", "1"));
  const DistEnvironment env = read_dist_environment();
  auto group = ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(60));
  // Each workload's tiny default batch per rank (the transformer's counts tokens).
  RunOptions o;
  o.workload = workload;
  o.scale = Scale::tiny;
  o.batch_size = create_workload(workload)->info().default_batch;
  o.settings = settings_for(workload);
  o.data_workers = 1;
  o.precision = parse_precision(env_or("TBD_TEST_PRECISION", "fp32"));
  if (env_or("TBD_TEST_CHECKPOINTING", "") == "full")
    o.activation_checkpointing = parse_activation_checkpointing("full");
  testing::WorkloadUnderTest replicated(o);
  testing::WorkloadUnderTest sharded(o);
  // Rank r takes the r-th of every `world_size` batches of the (common)
  // stream: its own data, as a data-parallel rank has.
  std::vector<std::vector<Batch>> steps;
  // wgan's iteration is six updates (five of the critic): one of them.
  const int iterations = std::string(workload) == "wgan" ? 1 : kSteps;
  for (int i = 0; i < iterations; ++i) {
    std::vector<Batch> micro;
    for (int64_t k = 0; k < accum; ++k)
      for (int r = 0; r < env.world_size; ++r) {
        Batch b = replicated.workload->next_batch();
        if (r == env.rank) micro.push_back(std::move(b));
      }
    steps.push_back(micro);
  }
  ParameterSet a = replicated.workload->state(), b = sharded.workload->state();
  {
    torch::NoGradGuard no_grad;
    group->broadcast_from_rank0(a.weights);
    group->broadcast_from_rank0(b.weights);
  }
  const auto before = flat(a).clone();
  ASSERT_TRUE(torch::equal(before, flat(b)));
  constexpr int64_t kBucketBytes = 16 * 1024;  // several buckets even for tiny models
  GradientReducer reducer(a.weights, *group, kBucketBytes, overlap);
  replicated.phases.set_gradient_sync(&reducer);
  ShardedDataParallel zero(b.weights, sharded.workload->optimizers(), sharded.workload->shard_units(), *group,
                           kBucketBytes, overlap, stage, autocast_type(o.precision));
  sharded.phases.set_gradient_sync(&zero);
  // The same random draws (dropout) in both runs.
  seed_everything(7);
  for (const auto& micro : steps) replicated.step(micro);
  seed_everything(7);
  for (const auto& micro : steps) sharded.step(micro);
  // The model state this rank holds, before full's parameters are gathered back.
  const auto described = zero.describe(sharded.workload->state().optimizer_state);
  zero.unshard();

  const auto w_replicated = flat(replicated.workload->state());
  const auto w_sharded = flat(sharded.workload->state());
  const double moved = (w_replicated - before).norm().item<double>();
  const double apart = (w_sharded - w_replicated).norm().item<double>();
  EXPECT_GT(moved, 0);
  if (o.precision == Precision::fp32) {
    // The weights agree elementwise, and the two updates agree to 1e-4 of
    // their size (clipping's norm is summed in another order).
    EXPECT_TRUE(torch::allclose(w_sharded, w_replicated, 1e-5, 1e-6))
        << "max difference " << (w_sharded - w_replicated).abs().max().item<double>();
    EXPECT_LT(apart, 1e-4 * moved) << "updates differ by " << apart << " of " << moved;
  } else {
    // bf16: the same casts, yet gpt's runs differ in the last bits
    // somewhere (not pinned down; likeliest a bf16 kernel summing in another
    // order for a weight at another address: a view of the unit's buffer,
    // not autocast's copy), and Adam turns the noise in a gradient that
    // should be zero (the attention's key bias: softmax ignores a shift of
    // every key) into whole steps: the updates agree to 1% of their size
    // (0.4% measured; llama's and resnet50's to the fp32 tolerance).
    EXPECT_LT(apart, 1e-2 * moved) << "updates differ by " << apart << " of " << moved;
  }

  // The optimizer state was made for this rank's shard only.
  const double state = described["model_state_bytes_per_rank"]["optimizer_state"].get<double>();
  const double formula = described["formula_bytes_per_rank"]["optimizer_state"].get<double>();
  const double replicated_state = static_cast<double>(bytes(replicated.workload->state().optimizer_state));
  if (env.rank == 0) {
    std::ofstream(out) << nlohmann::json{
        {"described", described},
        {"replicated_optimizer_state", replicated_state},
        {"moved", moved},
        {"apart", apart}}.dump();
  }
  EXPECT_NEAR(state, formula, 0.05 * formula);
  EXPECT_NEAR(state, replicated_state / env.world_size, 0.05 * replicated_state / env.world_size);
}

nlohmann::json run_two_ranks(const std::string& workload, const std::string& sharding, const std::string& overlap,
                             int accum, const std::string& checkpointing, const std::string& precision) {
  testing::TempDir dir;
  const std::string out = dir / "described.json";
  setenv("TBD_TEST_OUT", out.c_str(), 1);
  setenv("TBD_TEST_WORKLOAD", workload.c_str(), 1);
  setenv("TBD_TEST_SHARDING", sharding.c_str(), 1);
  setenv("TBD_TEST_OVERLAP", overlap.c_str(), 1);
  setenv("TBD_TEST_ACCUM", std::to_string(accum).c_str(), 1);
  if (!checkpointing.empty()) setenv("TBD_TEST_CHECKPOINTING", checkpointing.c_str(), 1);
  setenv("TBD_TEST_PRECISION", precision.c_str(), 1);
  const int rc =
      run_local_workers({"tbd_tests", "--gtest_filter=ShardedDataParallelWorker.TrainsLikeTheReplicatedRun"}, 2);
  for (const char* v : {"TBD_TEST_OUT", "TBD_TEST_WORKLOAD", "TBD_TEST_SHARDING", "TBD_TEST_OVERLAP", "TBD_TEST_ACCUM",
                        "TBD_TEST_CHECKPOINTING", "TBD_TEST_PRECISION"})
    unsetenv(v);
  EXPECT_EQ(rc, 0) << "a rank's expectations failed (its output above says which)";
  std::ifstream in(out);
  if (!in) return nullptr;
  return nlohmann::json::parse(in);
}

void expect_same_training(const std::string& workload, const std::string& sharding, const std::string& overlap = "on",
                          int accum = 1, const std::string& checkpointing = "", const std::string& precision = "fp32") {
  const auto r = run_two_ranks(workload, sharding, overlap, accum, checkpointing, precision);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["described"]["strategy"], sharding);
  EXPECT_EQ(r["described"]["ranks"], 2);
  const auto& held = r["described"]["model_state_bytes_per_rank"];
  const auto& formula = r["described"]["formula_bytes_per_rank"];
  // The gradients held per rank: every bucket (ZeRO-1) or a half of each (ZeRO-2).
  EXPECT_NEAR(held["gradients"].get<double>(), formula["gradients"].get<double>(),
              0.05 * formula["gradients"].get<double>());
  // The weights: whole (ZeRO-1, 2), or the units' shards and the root whole (ZeRO-3).
  EXPECT_NEAR(held["weights"].get<double>(), formula["weights"].get<double>(), 0.05 * formula["weights"].get<double>());
  if (sharding == "full") {
    const auto& units = r["described"]["units"];
    EXPECT_GT(units["count"].get<int>(), 1);
    // Never more than three units whole at once: the one computing, the one
    // prefetched, the one whose last gradients are still coming.
    EXPECT_GT(units["peak_gathered_bytes"].get<double>(), 0);
    EXPECT_LE(units["peak_gathered_bytes"].get<double>(), 3 * units["largest_unit_bytes"].get<double>());
    // Under bf16 the linear and convolution parameters travel and sit
    // gathered in bf16 (half the bytes), the norms' in fp32.
    const bool mixed = precision == "bf16";
    EXPECT_EQ(units["gathered_precision"], mixed ? "BFloat16" : "Float");
    const auto low = units["elements_gathered_in_run_precision"].get<double>(),
               fp32 = units["elements_gathered_in_fp32"].get<double>();
    EXPECT_GT(fp32, 0);  // every unit has norm parameters
    if (mixed) {
      EXPECT_GT(low, 10 * fp32);
    } else {
      EXPECT_EQ(low, 0);
    }
  }
}

TEST(ShardedDataParallel, GptOptimizerShardingTrainsLikeReplication) { expect_same_training("gpt", "optimizer"); }
TEST(ShardedDataParallel, GptGradientShardingTrainsLikeReplication) { expect_same_training("gpt", "gradients"); }
// Two micro-batches per step, every collective after backward.
TEST(ShardedDataParallel, GptGradientShardingWithAccumulationAndNoOverlap) {
  expect_same_training("gpt", "gradients", "off", 2);
}
TEST(ShardedDataParallel, LlamaOptimizerShardingTrainsLikeReplication) { expect_same_training("llama", "optimizer"); }
TEST(ShardedDataParallel, LlamaGradientShardingTrainsLikeReplication) { expect_same_training("llama", "gradients"); }
TEST(ShardedDataParallel, TransformerOptimizerShardingTrainsLikeReplication) {
  expect_same_training("transformer", "optimizer");
}
TEST(ShardedDataParallel, TransformerGradientShardingTrainsLikeReplication) {
  expect_same_training("transformer", "gradients");
}
TEST(ShardedDataParallel, Resnet50OptimizerShardingTrainsLikeReplication) {
  expect_same_training("resnet50", "optimizer");
}
TEST(ShardedDataParallel, Resnet50GradientShardingTrainsLikeReplication) {
  expect_same_training("resnet50", "gradients");
}
// ZeRO-3: every wrapping unit gathered before its forward and its backward.
TEST(ShardedDataParallel, GptFullShardingTrainsLikeReplication) { expect_same_training("gpt", "full"); }
TEST(ShardedDataParallel, LlamaFullShardingTrainsLikeReplication) { expect_same_training("llama", "full"); }
TEST(ShardedDataParallel, TransformerFullShardingTrainsLikeReplication) { expect_same_training("transformer", "full"); }
TEST(ShardedDataParallel, Resnet50FullShardingTrainsLikeReplication) { expect_same_training("resnet50", "full"); }
// Micro-batches, collectives after backward, and each block recomputed in
// backward (activation checkpointing) from parameters gathered again.
TEST(ShardedDataParallel, GptFullShardingWithAccumulationCheckpointingAndNoOverlap) {
  expect_same_training("gpt", "full", "off", 2, "full");
}
// Mixed precision: the units' linear weights (convolutions' for resnet50)
// gathered in bf16, their gradients reduced in fp32; autocast would have
// cast them to bf16 anyway, so the step is the replicated bf16 run's.
TEST(ShardedDataParallel, LlamaFullShardingInBf16TrainsLikeReplication) {
  expect_same_training("llama", "full", "on", 1, "", "bf16");
}
TEST(ShardedDataParallel, Resnet50FullShardingInBf16TrainsLikeReplication) {
  expect_same_training("resnet50", "full", "on", 1, "", "bf16");
}
// bf16 gradients of earlier micro-batches added up in fp32, blocks re-run.
TEST(ShardedDataParallel, GptFullShardingInBf16WithAccumulationCheckpointingAndNoOverlap) {
  expect_same_training("gpt", "full", "off", 2, "full", "bf16");
}
// Activation checkpointing with the collectives overlapped: a block's
// re-run asks torch::autograd::grad for its parameters' gradients, which
// runs their tensor hooks once more; the replicated reducer counted each
// such gradient twice and launched its bucket early (fixed: both reducers
// use the post-accumulate-grad hook, which the outer backward runs once).
TEST(ShardedDataParallel, GptGradientShardingWithCheckpointingAndOverlap) {
  expect_same_training("gpt", "gradients", "on", 1, "full");
}
// Two optimizers (critic and generator) over one set of shards.
TEST(ShardedDataParallel, WganGradientShardingTrainsLikeReplication) { expect_same_training("wgan", "gradients"); }

}  // namespace
}  // namespace tbd
