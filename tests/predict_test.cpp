// The what-if models (predict/): the data-parallel replay hides an
// all-reduce behind backward exactly when the backward timeline leaves room
// for it, Amdahl's law for a faster operator class, the memory line's
// out-of-memory batch; the bucket rule the reducer and the model share; and
// the gradient probe's timeline on a real backward pass.
#include <gtest/gtest.h>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "tbd/core/error.h"
#include "tbd/dist/gradient_buckets.h"
#include "tbd/measure/probes/gradient_probe.h"
#include "tbd/predict/data_parallel_model.h"
#include "tbd/predict/memory_model.h"
#include "tbd/predict/op_speedup_model.h"

namespace tbd {
namespace {

// A single-process result with two 1 MB parameters whose gradients are ready
// at `ready0` and `ready1` (fractions of backward), 10 ms forward, 20 ms backward.
nlohmann::json base_result(double ready0, double ready1) {
  return {{"throughput", {{"samples_per_s", 1000.0}, {"unit", "samples/s"}}},
          {"summary", {{"mean_s", 0.035}}},
          {"iterations", {0.035, 0.035}},
          {"phases",
           {{"data_ms", 0.0},
            {"forward_ms", 10.0},
            {"backward_ms", 20.0},
            {"optimizer_ms", 5.0},
            {"other_ms", 0.0},
            {"iteration_ms", 35.0}}},
          {"gradients",
           {{"elements", {250000, 250000}},
            {"element_size", {4, 4}},
            {"kind", {"Float@cpu", "Float@cpu"}},
            {"backward_passes", {{{"share_of_backward", 1.0}, {"ready_fraction", {ready0, ready1}}}}}}},
          {"workload", {{"options", {{"batch_size", 8}}}}}};
}

DataParallelPlan plan_with_allreduce_ms(double ms, bool overlap, double bucket_mb) {
  DataParallelPlan plan;
  plan.overlap = overlap;
  plan.bucket_mb = bucket_mb;
  plan.allreduce_seconds = [ms](double) { return ms / 1e3; };
  return plan;
}

TEST(DataParallelModel, EarlyBucketsHideBehindBackwardLateOnesDoNot) {
  // Buckets of one parameter each (bucket 1 MB): the last parameter's bucket goes first.
  const auto base = base_result(/*ready0=*/1.0, /*ready1=*/0.1);
  const auto p = predict_data_parallel(base, plan_with_allreduce_ms(4, true, 1.0));
  // Bucket of parameter 1 ready at 2 ms, done at 6; parameter 0's at 20 ms, done at 24: 4 ms exposed.
  EXPECT_NEAR(p["iteration_ms"]["communication_exposed"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(p["iteration_ms"]["total"].get<double>(), 39.0, 1e-9);
  EXPECT_NEAR(p["hidden_share"].get<double>(), 0.5, 1e-9);
  // Overlap off: both after backward, one at a time.
  const auto off = predict_data_parallel(base, plan_with_allreduce_ms(4, false, 1.0));
  EXPECT_NEAR(off["iteration_ms"]["communication_exposed"].get<double>(), 8.0, 1e-9);
  // Throughput follows the iteration time; the global rate counts every rank.
  EXPECT_NEAR(p["per_rank_samples_per_s"].get<double>(), 1000.0 * 35 / 39, 1e-6);
  EXPECT_NEAR(p["global_samples_per_s"].get<double>(), 2 * 1000.0 * 35 / 39, 1e-6);
}

TEST(DataParallelModel, CoLocatedPhasesReplaceTheBaseAndTheSlowestRankSetsThePace) {
  auto plan = plan_with_allreduce_ms(0, true, 25);
  plan.rank_phases = {{"forward_ms", 15.0}, {"backward_ms", 30.0}, {"optimizer_ms", 5.0}};
  plan.straggle_s = aligned_straggle({{0.040, 0.060}, {0.040, 0.060}});  // in step: no straggler
  const auto p = predict_data_parallel(base_result(0.5, 0.5), plan);
  EXPECT_NEAR(p["iteration_ms"]["total"].get<double>(), 50.0, 1e-9);
  // Out of step: iteration k waits for the slower copy's k-th iteration.
  plan.straggle_s = aligned_straggle({{0.040, 0.060}, {0.060, 0.040}});
  EXPECT_NEAR(predict_data_parallel(base_result(0.5, 0.5), plan)["iteration_ms"]["straggler"].get<double>(), 10.0,
              1e-9);
  EXPECT_EQ(aligned_straggle({{0.04, 0.06}}), 0.0);
}

// Parameter 0 an embedding table with sparse gradients: on a CPU base
// (Gloo) it joins no bucket and is all-reduced when backward ends, after the
// buckets; on a CUDA base (NCCL) it travels densified in a bucket.
TEST(DataParallelModel, SparseGradientsGoOnTheirOwnWhenBackwardEnds) {
  auto base = base_result(/*ready0=*/1.0, /*ready1=*/0.1);
  base["gradients"]["sparse"] = {{{"rows", 1000}, {"entries", 64.0}}, nullptr};
  base["workload"]["options"]["device"] = "cpu";
  EXPECT_EQ(bucket_bytes_of(base, 1.0), std::vector<double>({1e6}));  // parameter 1's bucket only
  const auto sparse = sparse_gradients_of(base);
  ASSERT_EQ(sparse.size(), 1u);
  EXPECT_EQ(sparse[0].rows, 1000);
  EXPECT_EQ(sparse[0].row_elements, 250);
  auto plan = plan_with_allreduce_ms(4, true, 1.0);
  plan.sparse_allreduce_seconds = 0.003;
  const auto p = predict_data_parallel(base, plan);
  // Parameter 1's bucket: 2–6 ms, hidden; the sparse all-reduce 20–23 ms: 3 ms exposed.
  EXPECT_NEAR(p["iteration_ms"]["communication_exposed"].get<double>(), 3.0, 1e-9);
  EXPECT_NEAR(p["allreduce_busy_ms"].get<double>(), 7.0, 1e-9);
  // Parameter 1 ready when backward ends too: its bucket (20–24 ms) and the
  // sparse all-reduce (20–23 ms) are in flight together, not one after the other.
  auto late = base;
  late["gradients"]["backward_passes"][0]["ready_fraction"][1] = 1.0;
  const auto q = predict_data_parallel(late, plan);
  EXPECT_NEAR(q["iteration_ms"]["communication_exposed"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(q["allreduce_busy_ms"].get<double>(), 4.0, 1e-9);  // in flight 20–24 ms, counted once
  // Ring model: 3 collectives' latency + (N−1) × entries × (8 + row bytes) / bus.
  EXPECT_NEAR(ring_sparse_allreduce_seconds(sparse, 2, 1e9, 1e-5), 3e-5 + 64 * (8 + 1000) / 1e9, 1e-12);
  // Two tables of one row shape: stacked into one collective, twice the bytes.
  EXPECT_NEAR(ring_sparse_allreduce_seconds({sparse[0], sparse[0]}, 2, 1e9, 1e-5), 3e-5 + 2 * 64 * (8 + 1000) / 1e9,
              1e-12);

  base["workload"]["options"]["device"] = "cuda:0";
  EXPECT_TRUE(sparse_gradients_of(base).empty());
  EXPECT_EQ(bucket_bytes_of(base, 1.0).size(), 2u);
}

TEST(DataParallelModel, RefusesWhatItCannotReplay) {
  auto no_timeline = base_result(0.5, 0.5);
  no_timeline.erase("gradients");
  EXPECT_THROW(predict_data_parallel(no_timeline, plan_with_allreduce_ms(1, true, 25)), Error);
  auto distributed = base_result(0.5, 0.5);
  distributed["distributed"] = {{"world_size", 2}};
  EXPECT_THROW(predict_data_parallel(distributed, plan_with_allreduce_ms(1, true, 25)), UsageError);
}

TEST(DataParallelModel, RingAllReduceMovesTwoNMinusOneOverNOfTheBytes) {
  EXPECT_NEAR(ring_allreduce_seconds(1e9, 2, 1e9, 0), 1.0, 1e-12);
  EXPECT_NEAR(ring_allreduce_seconds(1e9, 4, 1e9, 1e-3), 1.5 + 1e-3, 1e-12);
  EXPECT_EQ(ring_allreduce_seconds(1e9, 1, 1e9, 1e-3), 0.0);
}

TEST(GradientBuckets, ReverseOrderSizeLimitAndKindsAsTheReducer) {
  const std::vector<GradientShape> shapes = {
      {100, 4, "Float@cpu"}, {100, 4, "Float@cpu"}, {300, 4, "Float@cpu"}, {10, 2, "BFloat16@cpu"}};
  const auto buckets = assign_gradient_buckets(shapes, 1600);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], std::vector<size_t>({3}));     // another dtype: alone
  EXPECT_EQ(buckets[1], std::vector<size_t>({2, 1}));  // 1200 + 400 bytes fit 1600
  EXPECT_EQ(buckets[2], std::vector<size_t>({0}));
  auto with_sparse = shapes;
  with_sparse[1].sparse = true;  // an embedding table's: in no bucket
  const auto apart = assign_gradient_buckets(with_sparse, 1600);
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(apart[1], std::vector<size_t>({2, 0}));
  EXPECT_EQ(bucket_bytes_of(base_result(0.5, 0.5), 25).size(), 1u);
  EXPECT_EQ(bucket_bytes_of(base_result(0.5, 0.5), 1).size(), 2u);
}

TEST(OpSpeedupModel, AmdahlOverTheClassShare) {
  auto base = base_result(0.5, 0.5);
  base["ops"] = {{"by_class", {{"conv", {{"share_of_self", 0.6}}}, {"gemm", {{"share_of_self", 0.2}}}}}};
  const auto p = predict_class_speedups(base, {{"conv", 2.0}});
  EXPECT_NEAR(p["iteration_ms"].get<double>(), 35 - 0.6 * 35 / 2, 1e-9);
  EXPECT_THROW(predict_class_speedups(base, {{"convolution", 2.0}}), UsageError);
  EXPECT_THROW(predict_class_speedups(base_result(0.5, 0.5), {{"conv", 2.0}}), Error);  // no ops probe
}

TEST(MemoryModel, FixedPlusPerSampleLine) {
  auto base = base_result(0.5, 0.5);
  // 8 samples: 100 MB fixed (weights, gradients, optimizer state) + 8 × 10 MB.
  base["memory"] = {
      {"peak_bytes", 180e6},
      {"breakdown",
       {{"weights", 40e6}, {"weight_gradients", 40e6}, {"optimizer_state", 20e6}, {"feature_maps", 80e6}}}};
  const auto p = predict_memory_limit(base, 1000000000LL);
  EXPECT_EQ(p["largest_fitting_batch"].get<long long>(), 90);
  EXPECT_EQ(p["first_out_of_memory_doubling"].get<long long>(), 128);  // 1, 2, ..., 64 fit
  EXPECT_TRUE(predict_memory_limit(base, 50000000LL)["largest_fitting_batch"].is_null());
}

// The gradients probe's section after `iterations` instrumented iterations
// of `loss_of()` and its backward, driven through the runner's callbacks.
template <class LossOf>
nlohmann::json gradient_section(const std::vector<torch::Tensor>& parameters, int iterations, const LossOf& loss_of) {
  GradientProbe probe;
  probe.watch(parameters);  // without a runner: the parameters given directly
  probe.on_window_begin(0);
  for (int i = 0; i < iterations; ++i) {
    probe.on_iteration_begin(true);
    const torch::Tensor loss = loss_of();
    probe.on_phase_begin(Phase::backward);
    loss.backward();
    probe.on_phase_end(Phase::backward);
    IterationRecord r;
    r.measured = true;
    probe.on_iteration_end(r);
  }
  probe.on_window_end(0);
  nlohmann::json result;
  probe.contribute(result);
  return result["gradients"];
}

// A probe-visible backward on a real model: the last layer's gradients come
// first, every fraction lies in [0, 1].
TEST(GradientProbe, LaterLayersAreReadyEarlier) {
  torch::nn::Sequential model(torch::nn::Linear(64, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                              torch::nn::ReLU(), torch::nn::Linear(256, 8));
  const auto g = gradient_section(model->parameters(), 3, [&] {
    return model->forward(torch::randn({512, 64})).square().mean();
  });
  const auto& ready = g["backward_passes"][0]["ready_fraction"];
  ASSERT_EQ(ready.size(), 6u);  // 3 weights, 3 biases
  for (const auto& f : ready) {
    ASSERT_TRUE(f.is_number());
    EXPECT_GE(f.get<double>(), 0.0);
    EXPECT_LE(f.get<double>(), 1.0);
  }
  EXPECT_LT(ready[4].get<double>(), ready[0].get<double>());   // last layer's weight before the first's
  for (const auto& s : g["sparse"]) EXPECT_TRUE(s.is_null());  // all dense
}

// An embedding bag with sparse gradients: the probe records its rows and the
// entries (looked-up rows, repeats included) of each gradient.
TEST(GradientProbe, RecordsASparseGradientsEntries) {
  torch::nn::EmbeddingBag table(torch::nn::EmbeddingBagOptions(1000, 16).sparse(true));
  const auto g = gradient_section(table->parameters(), 1, [&] {
    return table->forward(torch::randint(1000, {32, 3})).sum();
  });
  const auto& sparse = g["sparse"][0];
  ASSERT_TRUE(sparse.is_object()) << g.dump();
  EXPECT_EQ(sparse["rows"].get<int64_t>(), 1000);
  EXPECT_EQ(sparse["entries"].get<double>(), 96.0);  // 32 bags of 3
}

}  // namespace
}  // namespace tbd
