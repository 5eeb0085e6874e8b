#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/nn/neumf.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// By hand from the layer shapes (MLPerf NCF layout, MovieLens-20M):
//   4 embeddings: (138,493 users + 26,744 items) × (64 GMF + 128 MLP) = 31,725,504
//   MLP 256→256→128→64: 256·256+256 + 256·128+128 + 128·64+64     =    106,944
//   fused layer (64 + 64)→1: 128 + 1                                =        129
//   total                                                           = 31,832,577
TEST(NCF, FullScaleParameterCountByHand) {
  const auto w = create_workload("ncf");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "ncf")), 31'832'577);
}

// The closed form the workload uses agrees with a built model (MovieLens-1M
// sizes, the `small` scale: (6,040 + 3,706) × 192 + 106,944 + 129 = 1,978,305).
TEST(NCF, ClosedFormMatchesTheBuiltModel) {
  nn::NeuMFConfig c;
  c.users = 6'040;
  c.items = 3'706;
  EXPECT_EQ(count_parameters(*nn::NeuMF(c)), 1'978'305);
  EXPECT_EQ(nn::neumf_parameters(c), 1'978'305);
}

TEST(NCF, TinyStepGivesFiniteLoss) {
  WorkloadUnderTest t("ncf", Scale::tiny, {}, 50);
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 50);
  // One positive then four negatives, repeated.
  const auto labels = b.targets[0];
  EXPECT_EQ(labels.sum().item<double>(), 10.0);
  EXPECT_EQ(labels[0].item<double>(), 1.0);
  EXPECT_EQ(labels[1].item<double>(), 0.0);
  EXPECT_EQ(labels[5].item<double>(), 1.0);
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(2.0), 0.1);  // logits start near zero
  EXPECT_EQ(t.workload->state().parameter_count(), nn::neumf_parameters([] {
              nn::NeuMFConfig c;
              c.users = 300;
              c.items = 200;
              c.mf_dim = 8;
              c.mlp_widths = {32, 32, 16, 8};
              return c;
            }()));
}

TEST(NCF, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("ncf", Scale::tiny, {{"lr", "0.01"}}, 100);
  const auto losses = t.train_on_one_batch(30);
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(NCF, TrainsOnARatingsFile) {
  testing::TempDir dir;
  {
    std::ofstream out(dir / "ratings.csv");
    out << "userId,movieId,rating,timestamp\n";
    for (int u = 0; u < 20; ++u)
      for (int i = 0; i < 5; ++i) out << 100 + u << "," << 7 * (u + i) << ",4.0,1112486027\n";
  }
  WorkloadUnderTest t("ncf", Scale::tiny, {}, 25, c10::ScalarType::Float, dir / "ratings.csv");
  const auto config = t.workload->configuration();
  EXPECT_EQ(config["users"], 20);
  EXPECT_EQ(config["items"], 24);  // ids 7·0 … 7·23
  const auto losses = t.train_on_one_batch(2);
  EXPECT_TRUE(std::isfinite(losses[1]));
}

TEST(NCF, RejectsABadNegativesSetting) {
  EXPECT_NE(testing::error_of<UsageError>([] {
              WorkloadUnderTest t("ncf", Scale::tiny, {{"negatives", "-1"}});
            }).find("negatives"),
            std::string::npos);
}

}  // namespace
}  // namespace tbd
