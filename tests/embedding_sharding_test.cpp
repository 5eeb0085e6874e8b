// dlrm's embedding tables placed across ranks (--embedding-sharding table,
// row) on real c10d (Gloo over loopback, real processes): the placement
// rules, the tables' initial values wherever they live, and two ranks
// training like one process on the whole batch with replicated tables.
#include <gtest/gtest.h>

#include <torch/serialize.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "tbd/core/parameter_set.h"
#include "tbd/dist/dist_environment.h"
#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/local_launcher.h"
#include "tbd/dist/process_group.h"
#include "tbd/dist/sharded_embedding_bags.h"
#include "tbd/nn/dlrm.h"
#include "tbd/workloads/recipe.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {

constexpr int kSteps = 5;
constexpr int64_t kPerRank = 8;

TEST(EmbeddingSharding, TablesGoLargestFirstToTheLeastLoadedRank) {
  // 100 → rank 0; 50 → rank 1; 40 → rank 1 (50 < 100); 10 → rank 1 (90 < 100).
  EXPECT_EQ(place_tables_by_rows({10, 100, 50, 40}, 2), (std::vector<int>{1, 0, 1, 1}));
  // More ranks than tables: the rest hold none.
  EXPECT_EQ(place_tables_by_rows({5, 7}, 3), (std::vector<int>{1, 0}));
  EXPECT_EQ(row_range(10, 0, 3), (std::pair<int64_t, int64_t>{0, 3}));
  EXPECT_EQ(row_range(10, 1, 3), (std::pair<int64_t, int64_t>{3, 6}));
  EXPECT_EQ(row_range(10, 2, 3), (std::pair<int64_t, int64_t>{6, 10}));
  EXPECT_EQ(row_range(2, 2, 3), (std::pair<int64_t, int64_t>{1, 2}));
}

TEST(EmbeddingSharding, EachRanksRowsAddUpToTheTables) {
  const std::vector<int64_t> rows = {10, 100, 50, 40};
  // Replicated: every rank holds all 200 rows; table-wise rank 0 the 100-row
  // table and rank 1 the other three (above); row-wise a half of each.
  using Held = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(total_rows(rows_held(rows, EmbeddingSharding::replicate, 1, 2)), 200);
  EXPECT_EQ(rows_held(rows, EmbeddingSharding::table, 0, 2), (Held{{0, 0}, {0, 100}, {0, 0}, {0, 0}}));
  EXPECT_EQ(rows_held(rows, EmbeddingSharding::table, 1, 2), (Held{{0, 10}, {0, 0}, {0, 50}, {0, 40}}));
  EXPECT_EQ(rows_held(rows, EmbeddingSharding::row, 1, 2), (Held{{5, 10}, {50, 100}, {25, 50}, {20, 40}}));
  for (auto how : {EmbeddingSharding::table, EmbeddingSharding::row}) {
    int64_t total = 0;
    for (int r = 0; r < 3; ++r) total += total_rows(rows_held(rows, how, r, 3));
    EXPECT_EQ(total, 200) << to_string(how);
  }
}

// A slice drawn on its own holds the whole table's values there, across the
// 65,536-row blocks the generators are seeded by.
TEST(EmbeddingSharding, RowsHoldTheWholeTablesInitialValues) {
  const int64_t rows = 150'000;
  auto whole = torch::empty({rows, 4});
  nn::init_embedding_rows(whole, 3, rows, 0, 42);
  auto part = torch::empty({80'000, 4});
  nn::init_embedding_rows(part, 3, rows, 60'000, 42);
  EXPECT_TRUE(torch::equal(part, whole.narrow(0, 60'000, 80'000)));
  const double bound = 1.0 / std::sqrt(static_cast<double>(rows));
  EXPECT_LE(whole.abs().max().item<double>(), bound);
  auto other = torch::empty({80'000, 4});
  nn::init_embedding_rows(other, 4, rows, 60'000, 42);  // another table: other values
  EXPECT_FALSE(torch::equal(part, other));
}

// TBD_TEST_* name the case: config (kaggle: one-hot, SGD; dcnv2: multi-hot,
// Adagrad) and placement. Each rank trains on its half of one batch (rank 0's
// stream on both) and saves its named weights.
TEST(EmbeddingShardingWorker, TrainsItsHalf) {
  const char* out = std::getenv("TBD_TEST_OUT");
  if (!out || !std::getenv("RANK")) GTEST_SKIP() << "runs only as a rank of EmbeddingSharding.*";
  const DistEnvironment env = read_dist_environment();
  auto group = ProcessGroup::connect(env, c10::Device(c10::kCPU), std::chrono::seconds(60));
  RunOptions o;
  o.workload = "dlrm";
  o.scale = Scale::tiny;
  o.batch_size = kPerRank * env.world_size;
  o.settings = {{"config", std::getenv("TBD_TEST_CONFIG")}};
  o.embedding_sharding = parse_embedding_sharding(std::getenv("TBD_TEST_PLACEMENT"));
  o.data_workers = 1;
  testing::WorkloadUnderTest t(o, group.get());
  const ParameterSet state = t.workload->state();
  const auto local = t.workload->rank_local_parameters();
  ASSERT_FALSE(local.empty());
  std::vector<torch::Tensor> replicated;
  for (const auto& w : state.weights) {
    bool is_local = false;
    for (const auto& l : local) is_local = is_local || l.is_same(w);
    if (!is_local) replicated.push_back(w);
  }
  GradientReducer reducer(replicated, *group, 16 * 1024, /*overlap=*/true);
  t.phases.set_gradient_sync(&reducer);
  const Batch whole = t.workload->next_batch();
  const Batch mine = testing::batch_rows(whole, env.rank * kPerRank, kPerRank, true);
  for (int i = 0; i < kSteps; ++i) t.step(mine);
  c10::Dict<std::string, torch::Tensor> weights;
  for (const auto& p : dynamic_cast<const Recipe<nn::DLRM>&>(*t.workload).named_weights())
    weights.insert(p.first, p.second);
  const auto bytes = torch::pickle_save(c10::IValue(weights));
  std::ofstream(std::string(out) + "." + std::to_string(env.rank), std::ios::binary).write(bytes.data(), bytes.size());
}

void expect_two_ranks_match_one(const std::string& config, const std::string& placement) {
  testing::TempDir dir;
  const std::string out = dir / "weights";
  setenv("TBD_TEST_OUT", out.c_str(), 1);
  setenv("TBD_TEST_CONFIG", config.c_str(), 1);
  setenv("TBD_TEST_PLACEMENT", placement.c_str(), 1);
  const int rc = run_local_workers({"tbd_tests", "--gtest_filter=EmbeddingShardingWorker.TrainsItsHalf"}, 2);
  for (const char* v : {"TBD_TEST_OUT", "TBD_TEST_CONFIG", "TBD_TEST_PLACEMENT"}) unsetenv(v);
  ASSERT_EQ(rc, 0);

  testing::WorkloadUnderTest one("dlrm", Scale::tiny, {{"config", config}}, 2 * kPerRank);
  std::map<std::string, torch::Tensor> before;
  for (const auto& [name, w] : dynamic_cast<const Recipe<nn::DLRM>&>(*one.workload).named_weights())
    before[name] = w.clone();
  const Batch whole = one.workload->next_batch();
  for (int i = 0; i < kSteps; ++i) one.step(whole);
  const auto single = dynamic_cast<const Recipe<nn::DLRM>&>(*one.workload).named_weights();
  const nn::DLRMConfig c = nn::dlrm_config(config);

  int tables_seen = 0;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(out + "." + std::to_string(rank), std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto saved = torch::pickle_load(bytes).toGenericDict();
    for (const auto& entry : saved) {
      const std::string name = entry.key().toStringRef();
      const torch::Tensor w = entry.value().toTensor();
      ASSERT_TRUE(single.count(name)) << name;
      torch::Tensor expected = single.at(name);
      if (name.starts_with("tables.")) {
        ++tables_seen;
        if (placement == "row") {  // this rank's rows of the table
          const int64_t table = std::stoll(name.substr(7, name.find('.', 7) - 7));
          const auto [first, end] = row_range(std::min<int64_t>(c.table_sizes[table], 1000), rank, 2);
          expected = expected.narrow(0, first, end - first);
        }
      }
      ASSERT_EQ(w.sizes(), expected.sizes()) << name;
      EXPECT_FALSE(torch::equal(expected, before.at(name)) && name.starts_with("top")) << name << " did not train";
      EXPECT_TRUE(torch::allclose(w, expected, 1e-4, 1e-5))
          << config << " " << placement << ", rank " << rank << ": " << name << " differs by "
          << (w - expected).abs().max().item<float>();
    }
  }
  // Table-wise: each table once over the two ranks; row-wise: twice (both halves).
  EXPECT_EQ(tables_seen, static_cast<int>(c.table_sizes.size()) * (placement == "row" ? 2 : 1));
}

TEST(EmbeddingSharding, TableWiseTrainsLikeReplicatedTables) { expect_two_ranks_match_one("kaggle", "table"); }
TEST(EmbeddingSharding, RowWiseTrainsLikeReplicatedTables) { expect_two_ranks_match_one("kaggle", "row"); }
TEST(EmbeddingSharding, TableWiseMultiHotAdagrad) { expect_two_ranks_match_one("dcnv2", "table"); }
TEST(EmbeddingSharding, RowWiseMultiHotAdagrad) { expect_two_ranks_match_one("dcnv2", "row"); }

}  // namespace
}  // namespace tbd
