#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

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

TEST(DLRM, ClosedFormMatchesTheBuiltModel) {
  nn::DLRMConfig c;
  for (auto& rows : c.table_sizes) rows = std::min<int64_t>(rows, 2000);
  EXPECT_EQ(count_parameters(*nn::DLRM(c)), nn::dlrm_parameters(c));
  EXPECT_EQ(nn::dlrm_top_widths(c), (std::vector<int64_t>{367, 512, 256, 1}));
  EXPECT_EQ(nn::dlrm_bottom_widths(c), (std::vector<int64_t>{13, 512, 256, 64, 16}));
}

// The interaction is every dot product between distinct vectors, once.
TEST(DLRM, DotInteractionFeedsTheTopMLP) {
  nn::DLRMConfig c;
  c.table_sizes = {5, 7};
  c.embedding_dim = 2;
  c.bottom = {4};
  c.top = {3};
  nn::DLRM model(c);
  EXPECT_EQ(nn::dlrm_top_widths(c)[0], 2 + 3);  // 3 vectors: 3 pairs
  auto dense = torch::rand({4, 13});
  auto sparse = torch::tensor({0, 1, 4, 6, 2, 2, 3, 0}, torch::kInt64).view({4, 2});
  auto x = model->bottom->forward(dense);
  auto e0 = model->tables->ptr<torch::nn::EmbeddingBagImpl>(0)->weight.index_select(0, sparse.select(1, 0));
  auto e1 = model->tables->ptr<torch::nn::EmbeddingBagImpl>(1)->weight.index_select(0, sparse.select(1, 1));
  auto manual = torch::cat({x, (e0 * x).sum(1, true), (e1 * x).sum(1, true), (e1 * e0).sum(1, true)}, 1);
  EXPECT_TRUE(torch::allclose(model->forward(dense, sparse), model->top->forward(manual).squeeze(1), 1e-5, 1e-6));
}

TEST(DLRM, TinyStepGivesFiniteLoss) {
  WorkloadUnderTest t("dlrm", Scale::tiny, {}, 64);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 64);
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{64, 13}));
  EXPECT_EQ(b.inputs[1].sizes(), (std::vector<int64_t>{64, 26}));
  EXPECT_GE(b.inputs[0].min().item<float>(), 0.0f);  // log(1 + count)
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(loss, 3.0);
}

TEST(DLRM, SyntheticIdsAreSkewed) {
  WorkloadUnderTest t("dlrm", Scale::tiny, {}, 2000);
  const auto ids = t.workload->next_batch().inputs[1].select(1, 2);  // a 1000-row table
  const auto counts = torch::bincount(ids, {}, 1000);
  // Power law: the hottest id takes far more than a uniform 2 of 2000 draws.
  EXPECT_GT(counts.max().item<int64_t>(), 50);
  EXPECT_LT(ids.max().item<int64_t>(), 1000);
}

TEST(DLRM, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("dlrm", Scale::tiny, {}, 64);
  const auto losses = t.train_on_one_batch(40);
  EXPECT_LT(losses.back(), 0.7 * losses.front()) << losses.front() << " -> " << losses.back();
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

}  // namespace
}  // namespace tbd
