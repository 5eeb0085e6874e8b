// Gradient accumulation (--grad-accum N): N micro-batches per optimizer
// step. For a model without batch statistics the step's gradients and its
// update equal those of one batch N times larger (each micro-batch's loss is
// divided by N before its backward); batch norm normalises each micro-batch
// by its own statistics, as PyTorch does, so there they differ. The runner
// counts every micro-batch's samples in the iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tbd/core/error.h"
#include "tbd/core/phases.h"
#include "tbd/core/run_option_table.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {

using testing::error_of;
using testing::WorkloadUnderTest;

// Copies the weights' gradients as the optimizer phase begins: the step's
// accumulated gradients, before clipping and the update.
class GradientSnapshot final : public PhaseListener {
 public:
  explicit GradientSnapshot(std::vector<torch::Tensor> weights) : weights_(std::move(weights)) {}
  void on_phase_begin(Phase p) override {
    if (p != Phase::optimizer) return;
    ++optimizer_phases;
    gradients.clear();
    for (const auto& w : weights_) {
      const torch::Tensor& g = w.grad();
      gradients.push_back(!g.defined() ? torch::zeros_like(w) : g.is_sparse() ? g.to_dense() : g.clone());
    }
  }
  std::vector<torch::Tensor> gradients;
  int optimizer_phases = 0;

 private:
  std::vector<torch::Tensor> weights_;
};

std::vector<Batch> split(const Batch& whole, int64_t parts, const std::string& workload) {
  const int64_t each = whole.inputs[0].size(0) / parts;
  std::vector<Batch> micro;
  for (int64_t i = 0; i < parts; ++i) micro.push_back(testing::batch_rows(whole, i * each, each, workload == "dlrm"));
  return micro;
}

torch::Tensor flat(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> all;
  for (const auto& t : tensors) all.push_back(t.detach().reshape({-1}));
  return torch::cat(all);
}

struct OneStep {
  torch::Tensor gradients;  // all weights' gradients, flattened
  torch::Tensor before, after;
  double loss = 0;
  int optimizer_phases = 0;
};

// One optimizer step of `workload` (tiny, set up at `batch`) on its first
// batch, taken whole (parts 1) or as `parts` micro-batches of its rows.
OneStep one_step(const std::string& workload, const std::map<std::string, std::string>& settings, int64_t batch,
                 int64_t parts) {
  WorkloadUnderTest t(workload, Scale::tiny, settings, batch);
  const ParameterSet state = t.workload->state();
  GradientSnapshot snapshot(state.weights);
  Phases phases(c10::Device(c10::kCPU), c10::ScalarType::Float, {&snapshot});
  OneStep s;
  s.before = flat(state.weights).clone();
  const Batch whole = t.workload->next_batch();
  s.loss = t.workload->step(split(whole, parts, workload), phases).loss.item<double>();
  s.gradients = flat(snapshot.gradients);
  s.after = flat(t.workload->state().weights);
  s.optimizer_phases = snapshot.optimizer_phases;
  return s;
}

// Largest elementwise difference relative to the largest magnitude.
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

struct EquivalenceCase {
  std::string workload;
  std::map<std::string, std::string> settings;
  int64_t batch;
};

class GradAccumEquivalence : public ::testing::TestWithParam<EquivalenceCase> {};

// Four micro-batches of b rows give the gradients, the loss and the update
// of one batch of 4·b, within fp32 rounding (different summation order).
TEST_P(GradAccumEquivalence, MicroBatchesGiveTheWholeBatchsStep) {
  const auto& c = GetParam();
  const OneStep whole = one_step(c.workload, c.settings, c.batch, 1);
  const OneStep accumulated = one_step(c.workload, c.settings, c.batch, 4);
  ASSERT_TRUE(torch::equal(whole.before, accumulated.before));  // the same seed, the same model
  // One optimizer step for four micro-batches (gpt's clipping opens the phase twice per step).
  EXPECT_EQ(accumulated.optimizer_phases, whole.optimizer_phases);
  ASSERT_GT(whole.gradients.abs().max().item<double>(), 0);
  EXPECT_LT(relative_difference(accumulated.gradients, whole.gradients), 1e-5);
  EXPECT_NEAR(accumulated.loss, whole.loss, 1e-5 * std::abs(whole.loss));
  EXPECT_FALSE(torch::equal(whole.after, whole.before));
  // Adam's first update is about lr · sign(g): gradients near zero (within
  // rounding of each other) can move by a visible part of lr, so looser here.
  EXPECT_LT(relative_difference(accumulated.after - accumulated.before, whole.after - whole.before), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(WithoutBatchStatistics, GradAccumEquivalence,
                         ::testing::Values(EquivalenceCase{"gpt", {{"dropout", "0"}}, 8},
                                           EquivalenceCase{"llama", {{"warmup_steps", "0"}}, 8},
                                           EquivalenceCase{"ncf", {}, 64}, EquivalenceCase{"dlrm", {}, 32},
                                           EquivalenceCase{"dlrm", {{"config", "dcnv2"}}, 32}),
                         [](const auto& info) {
                           const auto config = info.param.settings.find("config");
                           return info.param.workload +
                                  (config == info.param.settings.end() ? "" : "_" + config->second);
                         });

// Batch norm normalises each micro-batch by its own mean and variance (as
// PyTorch's BatchNorm does under accumulation), so four micro-batches are not
// one batch four times larger: the gradients differ, and the step still runs.
TEST(GradAccum, BatchNormKeepsPerMicroBatchStatistics) {
  const OneStep whole = one_step("resnet50", {}, 16, 1);
  const OneStep accumulated = one_step("resnet50", {}, 16, 4);
  ASSERT_TRUE(torch::equal(whole.before, accumulated.before));
  EXPECT_TRUE(std::isfinite(accumulated.loss));
  EXPECT_TRUE(torch::isfinite(accumulated.after).all().item<bool>());
  EXPECT_GT(relative_difference(accumulated.gradients, whole.gradients), 1e-3);
}

TEST(GradAccum, LossFallsWithTwoMicroBatchesPerStep) {
  WorkloadUnderTest t("gpt", Scale::tiny, {{"lr", "0.003"}}, 4);
  const std::vector<Batch> micro = {t.workload->next_batch(), t.workload->next_batch()};
  std::vector<double> losses;
  for (int i = 0; i < 30; ++i) losses.push_back(t.step(micro));
  EXPECT_LT(losses.back(), losses.front() - 1.0) << losses.front() << " -> " << losses.back();
}

TEST(GradAccum, BadValuesAreRefused) {
  const RunOptionSpec* spec = find_run_option("--grad-accum");
  ASSERT_NE(spec, nullptr);
  for (const std::string bad : {"0", "-2", "2.5", "four", ""}) {
    RunOptions o;
    const std::string msg = error_of<UsageError>([&] { spec->parse(o, bad); });
    EXPECT_NE(msg.find("--grad-accum"), std::string::npos) << bad << ": " << msg;
  }
  RunOptions o;
  spec->parse(o, "8");
  EXPECT_EQ(o.grad_accum, 8);
  o.grad_accum = 0;  // from a caller other than the flag
  EXPECT_NE(error_of<UsageError>([&] { validate(o); }).find("--grad-accum must be a whole number"), std::string::npos);
  o.grad_accum = 1024;
  o.batch_size = kMaxBatchSize / 512;
  EXPECT_NE(error_of<UsageError>([&] { validate(o); }).find("samples per optimizer step"), std::string::npos);
}

TEST(GradAccum, WorkloadsWithoutOneOptimizerStepRefuseIt) {
  for (const std::string name : {"wgan", "a3c"}) {
    const auto workload = create_workload(name);
    const std::string msg = error_of<UsageError>([&] { check_grad_accum_supported(workload->info(), 2); });
    EXPECT_NE(msg.find(name + " does not accumulate gradients (--grad-accum 2)"), std::string::npos) << msg;
    check_grad_accum_supported(workload->info(), 1);  // the default is always accepted
  }
  for (const std::string name : {"resnet50", "gpt", "llama", "transformer", "ncf", "dlrm", "deepspeech2"})
    check_grad_accum_supported(create_workload(name)->info(), 4);
}

// Through the runner: an iteration is one optimizer step over N micro-batches
// and counts all their samples; the result records the batch arithmetic.
TEST(GradAccum, AnIterationCountsEveryMicroBatch) {
  RunOptions o;
  o.workload = "ncf";
  o.scale = Scale::tiny;
  o.batch_size = 16;
  o.grad_accum = 3;
  o.warmup = 1;
  o.iters = 2;
  o.repeat = 1;
  o.threads = 1;
  o.quiet = true;
  const auto workload = create_workload("ncf");
  const auto r = run_benchmark(o, *workload, {}).result;
  ASSERT_EQ(r["iteration_samples"].size(), 2u);
  const double micro_samples = r["iteration_samples"][0].get<double>() / 3;
  EXPECT_GT(micro_samples, 0);
  for (const auto& n : r["iteration_samples"]) EXPECT_DOUBLE_EQ(n.get<double>(), 3 * micro_samples);
  EXPECT_DOUBLE_EQ(r["throughput"]["samples"].get<double>(), 6 * micro_samples);
  const auto& batch = r["workload"]["batch"];
  EXPECT_EQ(batch["micro_batch"], 16);
  EXPECT_EQ(batch["grad_accum"], 3);
  EXPECT_EQ(batch["ranks"], 1);
  EXPECT_EQ(batch["global_batch"], 48);
  EXPECT_EQ(r["workload"]["options"]["grad_accum"], 3);
  // The configuration a study rebuilds carries it.
  const auto args = configuration_arguments(run_options_from_json(r["workload"]["options"]));
  const auto at = std::find(args.begin(), args.end(), "--grad-accum");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "3");
}

}  // namespace
}  // namespace tbd
