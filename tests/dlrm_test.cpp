#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <ATen/CPUGeneratorImpl.h>

#include "tbd/core/error.h"
#include "tbd/data/embedding_bags.h"
#include "tbd/nn/dlrm.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// By hand from the layer shapes (facebookresearch/dlrm, Criteo Kaggle):
//   26 tables: Σ rows = 33,762,577 (REFERENCE.md's sizes) × 16        = 540,201,232
//   bottom 13→512→256→64→16: 7,168 + 131,328 + 16,448 + 1,040           =     155,984
//   top input: 16 + C(27, 2) = 16 + 351 = 367 (26 tables + bottom output)
//   top 367→512→256→1: 188,416 + 131,328 + 257                          =     320,001
//   total                                                               = 540,677,217
TEST(DLRM, FullScaleParameterCountByHand) {
  const auto w = create_workload("dlrm");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "dlrm")), 540'677'217);
  int64_t rows = 0;
  for (int64_t r : nn::criteo_kaggle_table_sizes()) rows += r;
  EXPECT_EQ(rows, 33'762'577);
  EXPECT_EQ(nn::criteo_kaggle_table_sizes().size(), 26u);
}

// max_rows=1000: the 11 tables at or under 1000 rows (583, 305, 24, 633, 3,
// 27, 10, 4, 18, 15, 105: 1,727 rows) stay, 15 are capped: 16,727 rows.
// 16,727 × 16 + 155,984 + 320,001 = 743,617.
TEST(DLRM, MaxRowsCapsTheTables) {
  const auto w = create_workload("dlrm");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {{"max_rows", "1000"}}, "dlrm")), 743'617);
  WorkloadUnderTest t("dlrm", Scale::tiny, {{"max_rows", "50"}}, 8);
  const auto config = t.workload->configuration();
  EXPECT_EQ(config["max_rows"], 50);
  for (const auto& rows : config["table_sizes"]) EXPECT_LE(rows.get<int64_t>(), 50);
}

// The production-shaped configurations, by hand from their published
// definitions (REFERENCE.md):
// dcnv2 (MLPerf DLRMv2): Σ rows of the 26 capped Criteo 1TB tables =
//   204,184,588, × 128                                                 = 26,135,627,264
//   bottom 13→512→256→128: 7,168 + 131,328 + 32,896                    =        171,392
//   cross net, width 27 × 128 = 3,456, rank 512, 3 layers:
//     3 × (2 × 3,456 × 512 + 3,456) = 3 × 3,542,400                    =     10,627,200
//   top 3,456→1024→1024→512→256→1:
//     3,539,968 + 1,049,600 + 524,800 + 131,328 + 257                  =      5,245,953
//   dense 16,044,545; total                                            = 26,151,671,809
// rm1: 8 × 4,000,000 × 32 = 1,024,000,000; bottom 128→64→32: 8,256 + 2,080;
//   top (8+1)·32 = 288→256→64→1: 73,984 + 16,448 + 65: dense 100,833
// rm2: 32 × 500,000 × 64 = 1,024,000,000; bottom 256→128→64: 32,896 + 8,256;
//   top 33·64 = 2,112→128→64→1: 270,464 + 8,256 + 65: dense 319,937
// rm3: 10 × 2,000,000 × 32 = 640,000,000; bottom 2560→1024→256→32:
//   2,622,464 + 262,400 + 8,224; top 11·32 = 352→512→256→1:
//   180,736 + 131,328 + 257: dense 3,205,409
TEST(DLRM, ProductionConfigurationsCountedByHand) {
  const auto w = create_workload("dlrm");
  struct Expected {
    const char* config;
    int64_t embedding, dense;
  };
  for (const auto& e : {Expected{"kaggle", 540'201'232, 475'985}, Expected{"dcnv2", 26'135'627'264, 16'044'545},
                        Expected{"rm1", 1'024'000'000, 100'833}, Expected{"rm2", 1'024'000'000, 319'937},
                        Expected{"rm3", 640'000'000, 3'205'409}}) {
    const Settings settings(w->info().settings, {{"config", e.config}}, "dlrm");
    EXPECT_EQ(w->full_scale_parameters(settings), e.embedding + e.dense) << e.config;
    const auto parts = w->parameter_parts(settings);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0], (std::pair<std::string, int64_t>{"embedding", e.embedding})) << e.config;
    EXPECT_EQ(parts[1], (std::pair<std::string, int64_t>{"dense", e.dense})) << e.config;
  }
  const auto dcnv2 = nn::dlrm_config("dcnv2");
  int64_t rows = 0, lookups = 0;
  for (int64_t r : dcnv2.table_sizes) rows += r;
  for (int64_t l : dcnv2.lookups) lookups += l;
  EXPECT_EQ(rows, 204'184'588);
  EXPECT_EQ(lookups, 214);  // ids per sample
  EXPECT_EQ(nn::dlrm_top_widths(dcnv2), (std::vector<int64_t>{3456, 1024, 1024, 512, 256, 1}));
  EXPECT_EQ(nn::dlrm_top_widths(nn::dlrm_config("rm2"))[0], 2112);
  EXPECT_THROW(nn::dlrm_config("rm4"), UsageError);
}

// The closed forms count what the module holds, for every configuration
// (the published layers, tables capped so they build quickly).
TEST(DLRM, ClosedFormMatchesTheBuiltModel) {
  for (const auto& name : nn::dlrm_config_names()) {
    nn::DLRMConfig c = nn::dlrm_config(name);
    for (auto& rows : c.table_sizes) rows = std::min<int64_t>(rows, 200);
    nn::DLRM model(c);
    EXPECT_EQ(count_parameters(*model), nn::dlrm_parameters(c)) << name;
    int64_t tables = 0;
    for (const auto& p : model->tables->parameters()) tables += p.numel();
    EXPECT_EQ(tables, nn::dlrm_embedding_parameters(c)) << name;
  }
  const nn::DLRMConfig kaggle;
  EXPECT_EQ(nn::dlrm_top_widths(kaggle), (std::vector<int64_t>{367, 512, 256, 1}));
  EXPECT_EQ(nn::dlrm_bottom_widths(kaggle), (std::vector<int64_t>{13, 512, 256, 64, 16}));
}

// Two tables, three samples; the bags' ids and offsets as a batch carries them.
struct SmallModel {
  nn::DLRMConfig config;
  torch::Tensor dense = torch::rand({3, 13});
  // Table 0 one-hot; table 1 multi-hot with bags of 2, 0 and 3 ids (a
  // variable-length layout with an empty bag, which the module takes).
  std::vector<torch::Tensor> bags = {torch::tensor({0, 4, 2}, torch::kInt64), torch::tensor({0, 1, 2}, torch::kInt64),
                                     torch::tensor({1, 6, 3, 3, 0}, torch::kInt64),
                                     torch::tensor({0, 2, 2}, torch::kInt64)};
  explicit SmallModel(nn::DLRMInteraction interaction) {
    config.table_sizes = {5, 7};
    config.embedding_dim = 2;
    config.bottom = {4};
    config.top = {3};
    config.interaction = interaction;
    config.cross_layers = 2;
    config.cross_rank = 3;
  }
  // Each sample's pooled vector, summed by hand from the table's rows.
  static torch::Tensor pooled(nn::DLRM& model, size_t table, const std::vector<std::vector<int64_t>>& bags) {
    const auto& w = model->tables->ptr<torch::nn::EmbeddingBagImpl>(table)->weight;
    std::vector<torch::Tensor> rows;
    for (const auto& bag : bags) {
      auto sum = torch::zeros({w.size(1)});
      for (int64_t id : bag) sum = sum + w[id];
      rows.push_back(sum);
    }
    return torch::stack(rows);
  }
  torch::Tensor by_hand_inputs(nn::DLRM& model) {
    auto x = model->bottom->forward(dense);
    return torch::cat({x, pooled(model, 0, {{0}, {4}, {2}}), pooled(model, 1, {{1, 6}, {}, {3, 3, 0}})}, 1);
  }
};

// The interaction is every dot product between distinct vectors, once.
TEST(DLRM, DotInteractionFeedsTheTopMLP) {
  SmallModel m(nn::DLRMInteraction::dot);
  nn::DLRM model(m.config);
  EXPECT_EQ(nn::dlrm_top_widths(m.config)[0], 2 + 3);  // 3 vectors: 3 pairs
  const auto v = m.by_hand_inputs(model);
  const auto x = v.slice(1, 0, 2), e0 = v.slice(1, 2, 4), e1 = v.slice(1, 4, 6);
  auto manual = torch::cat({x, (e0 * x).sum(1, true), (e1 * x).sum(1, true), (e1 * e0).sum(1, true)}, 1);
  EXPECT_TRUE(torch::allclose(model->forward(m.dense, m.bags), model->top->forward(manual).squeeze(1), 1e-5, 1e-6));
}

// Concatenation (DeepRecSys): the bottom output, then each table's pooled sum.
TEST(DLRM, ConcatInteractionPoolsMultiHotBags) {
  SmallModel m(nn::DLRMInteraction::cat);
  nn::DLRM model(m.config);
  EXPECT_EQ(nn::dlrm_top_widths(m.config)[0], 3 * 2);
  const auto manual = m.by_hand_inputs(model);
  EXPECT_TRUE(torch::allclose(model->forward(m.dense, m.bags), model->top->forward(manual).squeeze(1), 1e-5, 1e-6));
}

// DCN-v2's low-rank cross layers by hand: x_{l+1} = x0 ⊙ (W (V x_l) + b) + x_l.
TEST(DLRM, CrossNetworkFollowsDcnV2) {
  SmallModel m(nn::DLRMInteraction::dcn);
  nn::DLRM model(m.config);
  ASSERT_EQ(model->cross->w->size(), 2u);
  EXPECT_EQ(model->cross->w[0].sizes(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(model->cross->v[0].sizes(), (std::vector<int64_t>{3, 6}));
  {
    torch::NoGradGuard no_grad;  // the bias starts at zero: give it values so a misuse shows
    for (size_t l = 0; l < 2; ++l) model->cross->bias[l].uniform_(-1, 1);
  }
  const auto x0 = m.by_hand_inputs(model);
  auto x = x0;
  for (size_t l = 0; l < 2; ++l) {
    const auto& w = model->cross->w[l];
    const auto& v = model->cross->v[l];
    x = x0 * (torch::matmul(torch::matmul(x, v.t()), w.t()) + model->cross->bias[l]) + x;
  }
  EXPECT_TRUE(torch::allclose(model->forward(m.dense, m.bags), model->top->forward(x).squeeze(1), 1e-5, 1e-6));
}

TEST(DLRM, EveryConfigurationTrainsAtTiny) {
  for (const auto& name : nn::dlrm_config_names()) {
    WorkloadUnderTest t("dlrm", Scale::tiny, {{"config", name}}, 64);
    const Batch b = t.workload->next_batch();
    const auto c = nn::dlrm_config(name);
    ASSERT_EQ(b.inputs.size(), 1 + 2 * c.table_sizes.size()) << name;
    EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{64, c.dense_features})) << name;
    EXPECT_GE(b.inputs[0].min().item<float>(), 0.0f);  // log(1 + count)
    for (size_t t = 0; t < c.table_sizes.size(); ++t) {
      const int64_t per_sample = c.lookups.empty() ? 1 : c.lookups[t];
      EXPECT_EQ(b.inputs[1 + 2 * t].numel(), 64 * per_sample) << name << " table " << t;
      EXPECT_EQ(b.inputs[2 + 2 * t][1].item<int64_t>(), per_sample) << name << " table " << t;
      EXPECT_LT(b.inputs[1 + 2 * t].max().item<int64_t>(), std::min<int64_t>(c.table_sizes[t], 1000));
    }
    // At each configuration's own reference rate (rm1-3's SGD 0.01 is slow).
    const auto losses = t.train_on_one_batch(120);
    EXPECT_LT(losses.back(), 0.7 * losses.front()) << name << ": " << losses.front() << " -> " << losses.back();
    const auto config = t.workload->configuration();
    EXPECT_EQ(config["config"], name);
    EXPECT_EQ(config["optimizer"], name == "dcnv2" ? "adagrad" : "sgd");
  }
}

TEST(DLRM, ModelsWithoutADatasetRefuseData) {
  testing::TempDir dir;
  std::ofstream(dir / "train.txt") << "1\n";
  try {
    WorkloadUnderTest t("dlrm", Scale::tiny, {{"config", "rm2"}}, 4, c10::ScalarType::Float, dir / "train.txt");
    FAIL() << "rm2 took a Criteo file";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("synthetic"), std::string::npos) << e.what();
  }
}

// P(rank r) ∝ (r + 1)^-s: uniform at s = 0, the hottest id about
// ln 2 / ln(rows + 1) of the draws at s = 1 (10% of a 1000-row table), more
// above; every id inside the table.
TEST(DLRM, PowerLawIdsFollowTheirExponent) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const int64_t rows = 1000, draws = 200'000;
  auto hottest_share = [&](double skew) {
    const auto ids = power_law_ids(rows, draws, skew, gen);
    EXPECT_GE(ids.min().item<int64_t>(), 0);
    EXPECT_LT(ids.max().item<int64_t>(), rows);
    const auto counts = torch::bincount(ids, {}, rows);
    if (skew == 0) {  // 200 expected per id: the Poisson spread stays well inside ±40%
      EXPECT_GT(counts.min().item<int64_t>(), 120);
      EXPECT_LT(counts.max().item<int64_t>(), 280);
    }
    return static_cast<double>(counts.max().item<int64_t>()) / draws;
  };
  EXPECT_LT(hottest_share(0.0), 0.0015);
  EXPECT_NEAR(hottest_share(1.0), std::log(2.0) / std::log(1001.0), 0.01);
  EXPECT_GT(hottest_share(1.5), 0.3);
}

TEST(DLRM, TrainsOnACriteoFile) {
  testing::TempDir dir;
  {
    std::ofstream out(dir / "train.txt");
    for (int i = 0; i < 10; ++i) {
      out << (i % 3 == 0 ? 1 : 0);
      for (int j = 0; j < 13; ++j) out << "\t" << (j == 4 ? "" : std::to_string(i * j));
      for (int j = 0; j < 26; ++j) out << "\t" << (j == 7 ? "" : "68fd1e64");
      out << "\n";
    }
  }
  WorkloadUnderTest t("dlrm", Scale::tiny, {}, 4, c10::ScalarType::Float, dir / "train.txt");
  const auto losses = t.train_on_one_batch(2);
  EXPECT_TRUE(std::isfinite(losses[1]));
}

// Writes small models of the three interactions (weights, inputs, logits)
// for tests/cli/dlrm_torch_test.sh, which rebuilds each in PyTorch from
// TorchRec's and DeepRecSys's definitions and compares the logits. Runs only
// when that test names a folder. dcnv2 keeps its 26 tables and multi-hot
// sizes, three cross layers and the depth of its MLPs, narrowed.
TEST(DlrmTorchParity, WritesSmallModelsForTheComparison) {
  const char* folder = std::getenv("TBD_DLRM_PARITY_DIR");
  if (!folder) GTEST_SKIP() << "set TBD_DLRM_PARITY_DIR to write the models (tests/cli/dlrm_torch_test.sh does)";
  torch::manual_seed(11);
  for (const std::string name : {"dcnv2", "rm2", "kaggle"}) {
    nn::DLRMConfig c = nn::dlrm_config(name);
    for (auto& rows : c.table_sizes) rows = std::min<int64_t>(rows, 50);
    c.embedding_dim = 16;
    c.bottom = {64, 32};
    c.top = {64, 32, 16};
    c.cross_rank = 8;
    nn::DLRM model(c);
    {
      torch::NoGradGuard no_grad;  // biases away from zero (the cross network's start there), so each one shows
      for (auto& p : model->parameters())
        if (p.dim() == 1) p.uniform_(-0.5, 0.5);
    }
    const int64_t batch = 5;
    std::vector<torch::Tensor> ids;
    for (size_t t = 0; t < c.table_sizes.size(); ++t)
      ids.push_back(torch::randint(c.table_sizes[t], {batch, c.lookups.empty() ? 1 : c.lookups[t]}, torch::kInt64));
    const auto bags = fixed_size_bags(ids, c10::kCPU);
    const auto dense = torch::rand({batch, c.dense_features});
    const auto logits = model->forward(dense, bags);
    c10::Dict<std::string, torch::Tensor> out;
    for (const auto& p : model->named_parameters()) out.insert("weight." + p.key(), p.value().detach());
    for (size_t t = 0; t < ids.size(); ++t) {
      out.insert("ids." + std::to_string(t), bags[2 * t]);
      out.insert("offsets." + std::to_string(t), bags[2 * t + 1]);
    }
    out.insert("dense", dense);
    out.insert("logits", logits.detach());
    out.insert("config", torch::tensor({static_cast<int64_t>(c.table_sizes.size()), c.embedding_dim,
                                        static_cast<int64_t>(c.interaction), c.cross_layers}));
    const auto bytes = torch::pickle_save(c10::IValue(out));
    std::ofstream(std::string(folder) + "/" + name + ".pt", std::ios::binary).write(bytes.data(), bytes.size());
  }
}

}  // namespace
}  // namespace tbd
