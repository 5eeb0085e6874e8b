#include <gtest/gtest.h>

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include "test_util.h"

#include "tbd/core/error.h"
#include "tbd/core/interrupt.h"
#include "tbd/core/workload.h"
#include "tbd/measure/machine/timing_conditions.h"
#include "tbd/measure/runner.h"

namespace tbd {
namespace {
using testing::error_of;

RunOptions tiny_run(int iters = 3, int warmup = 1) { return testing::tiny_resnet(4, iters, warmup); }

TEST(Runner, ResultHasTheSchemaKeysAndEveryIteration) {
  const RunOutcome out = testing::run_registered(tiny_run(3, 1), {"data", "cpu"});
  const auto& r = out.result;
  EXPECT_EQ(r["schema"], "tbd.result/1");
  EXPECT_EQ(r["workload"]["name"], "resnet50");
  EXPECT_EQ(r["workload"]["options"]["batch_size"], 4);
  EXPECT_EQ(r["workload"]["options"]["scale"], "tiny");
  ASSERT_EQ(r["iterations"].size(), 3u);
  double total = 0;
  for (const auto& t : r["iterations"]) {
    EXPECT_GT(t.get<double>(), 0.0);
    total += t.get<double>();
  }
  // Throughput is samples over the measured time, not a per-iteration average.
  EXPECT_NEAR(r["throughput"]["samples_per_s"].get<double>(), 12.0 / total, 1e-9);
  EXPECT_EQ(r["throughput"]["unit"], "images/s");
  EXPECT_EQ(r["summary"]["n"], 3);
  EXPECT_FALSE(r["partial"].get<bool>());
  EXPECT_GT(r["model"]["parameters"].get<int64_t>(), 0);
  EXPECT_EQ(r["model"]["parameters"], r["model"]["trainable_parameters"]);
  EXPECT_TRUE(r.contains("environment"));
  EXPECT_TRUE(r["data"].contains("stall_share"));
  EXPECT_GT(r["cpu"]["user_s"].get<double>() + r["cpu"]["system_s"].get<double>(), 0.0);
  EXPECT_EQ(r["warmup"]["iterations"], 1);
}

TEST(Runner, RepetitionsAreKeptApart) {
  RunOptions o = tiny_run(2, 0);
  o.repeat = 3;
  const auto r = testing::run_registered(o, {}).result;
  EXPECT_EQ(r["iterations"].size(), 6u);
  ASSERT_EQ(r["throughput"]["repetitions"].size(), 3u);
  for (const auto& rep : r["throughput"]["repetitions"]) EXPECT_EQ(rep["iterations"], 2);
}

TEST(Runner, MinTimeExtendsTheWindow) {
  RunOptions o = tiny_run(1, 0);
  o.min_time = 0.3;
  const auto r = testing::run_registered(o, {}).result;
  EXPECT_GE(r["throughput"]["seconds"].get<double>(), 0.3);
  EXPECT_GT(r["iterations"].size(), 1u);
}

TEST(Runner, AutoWarmupRecordsWhyItEnded) {
  RunOptions o = tiny_run(2, 0);
  o.warmup_auto = true;
  const auto r = testing::run_registered(o, {}).result;
  const std::string why = r["warmup"]["ended_by"];
  EXPECT_TRUE(why == "settled" || why == "cap") << why;
  EXPECT_GE(r["warmup"]["iterations"].get<int>(), why == "settled" ? 5 : 50);
}

TEST(Runner, InterruptGivesAPartialResult) {
  request_interrupt();
  const RunOutcome out = testing::run_registered(tiny_run(5, 2), {});
  clear_interrupt();
  EXPECT_TRUE(out.partial);
  EXPECT_TRUE(out.result["partial"].get<bool>());
  EXPECT_EQ(out.result["iterations"].size(), 0u);
  EXPECT_TRUE(out.result["throughput"]["samples_per_s"].is_null());  // not a made-up zero
}

TEST(Runner, DivergingLossIsAnErrorNotAResult) {
  RunOptions o = tiny_run(20, 0);
  o.settings = {{"lr", "1e11"}};
  const std::string msg = error_of<Error>([&] { testing::run_registered(o, {}); });
  EXPECT_NE(msg.find("diverged"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set lr"), std::string::npos) << msg;
}

TEST(Runner, BadRequestsAreUsageErrors) {
  RunOptions o = tiny_run();
  o.workload = "nosuch";
  EXPECT_THROW(testing::run_registered(o, {}), UsageError);
  o = tiny_run();
  o.settings = {{"depth", "7"}};
  EXPECT_THROW(testing::run_registered(o, {}), UsageError);
  o = tiny_run();
  o.device = "cuda";  // this build or machine has no CUDA device
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(testing::run_registered(o, {}), UsageError);
  }
  EXPECT_THROW(testing::run_registered(tiny_run(), {"nosuch-probe"}), UsageError);
}

TEST(Runner, HugeBatchIsAClearOutOfMemoryError) {
  // 2^30 images of 3x32x32 floats (12 TiB) cannot be allocated anywhere.
  RunOptions o = tiny_run();
  o.batch_size = kMaxBatchSize;
  const std::string msg = error_of<Error>([&] { testing::run_registered(o, {}); });
  EXPECT_NE(msg.find("--batch-size"), std::string::npos) << msg;
}

// A small fake workload: a linear model on batches of 2, 3 and 4 samples in
// turn, which records, for every step, whether any global RecordFunction
// callback (the flops and ops probes) or a memory reporter (the memory
// probe) was active while it ran.
class Spy final : public Workload {
 public:
  const WorkloadInfo& info() const override {
    static const WorkloadInfo i{"spy", "test", "linear 8->1", "random", "samples", 4, {}};
    return i;
  }
  void setup(const RunOptions&, const Settings&, torch::Device) override {
    model_ = torch::nn::Linear(8, 1);
    optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(0.01));
  }
  Batch next_batch() override {
    const int64_t n = 2 + (drawn_++ % 3);
    torch::Tensor x = torch::randn({n, 8});
    if (nan_input) x[0][3] = NAN;
    return {{x}, {torch::randn({n, 1})}, n};
  }
  StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) override {
    const Batch& b = micro_batches.front();
    instrumented.push_back(at::hasGlobalCallbacks() ||
                           c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr);
    torch::Tensor loss;
    {
      auto f = phases.forward();
      loss = torch::mse_loss(model_->forward(b.inputs[0]), b.targets[0]);
    }
    phases.backward(loss);
    phases.optimizer_step(*optimizer_);
    return {nan_loss ? loss.detach() * NAN : loss.detach()};
  }
  ParameterSet state() const override {
    ParameterSet s;
    s.add(*model_);
    return s;
  }
  int64_t full_scale_parameters(const Settings&) const override { return 9; }
  std::vector<bool> instrumented;
  bool nan_loss = false;
  bool nan_input = false;

 private:
  torch::nn::Linear model_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  int64_t drawn_ = 0;
};

TEST(Runner, AnalysisProbesStayOutOfTheTimedWindows) {
  Spy spy;
  RunOptions o = tiny_run(3, 2);
  o.repeat = 2;
  const auto r = run_benchmark(o, spy, {"flops", "memory", "ops"}).result;
  // 2 warm-up + 2 × 3 timed steps, then as many instrumented as timed (at most 5).
  ASSERT_EQ(spy.instrumented.size(), 2u + 6u + 5u);
  for (size_t i = 0; i < 8; ++i) EXPECT_FALSE(spy.instrumented[i]) << "warm-up or timed step " << i;
  for (size_t i = 8; i < spy.instrumented.size(); ++i) EXPECT_TRUE(spy.instrumented[i]) << "instrumented step " << i;
  EXPECT_EQ(r["instrumented"]["iterations"], 5);
  EXPECT_EQ(r["flops"]["iterations"], 5);
  EXPECT_EQ(r["ops"]["iterations"], 5);
  // Achieved FLOP/s: FLOPs per sample (instrumented) × samples per second (timed).
  const double per_sample = r["flops"]["per_sample"].get<double>();
  EXPECT_GT(per_sample, 0);
  EXPECT_NEAR(r["flops"]["achieved_flops_per_s"].get<double>(),
              per_sample * r["throughput"]["samples_per_s"].get<double>(), 1e-6 * per_sample);
  EXPECT_GT(r["memory"]["peak_bytes"].get<int64_t>(), 0);
}

TEST(Runner, InstrumentedIterationsCanBeChosen) {
  Spy spy;
  RunOptions o = tiny_run(2, 0);
  o.instrument_iters = 3;
  const auto r = run_benchmark(o, spy, {"flops"}).result;
  EXPECT_EQ(r["instrumented"]["iterations"], 3);
  EXPECT_EQ(spy.instrumented.size(), 5u);
  // Without an analysis probe there is no instrumented iteration at all.
  Spy plain;
  const auto q = run_benchmark(tiny_run(2, 0), plain, {"data", "cpu"}).result;
  EXPECT_EQ(q["instrumented"]["iterations"], 0);
  EXPECT_EQ(plain.instrumented.size(), 2u);
}

TEST(Runner, EveryIterationRecordsItsSamplesAndRepetition) {
  Spy spy;
  RunOptions o = tiny_run(3, 1);
  o.repeat = 2;
  const auto r = run_benchmark(o, spy, {}).result;
  ASSERT_EQ(r["iteration_samples"].size(), 6u);
  ASSERT_EQ(r["iteration_repetitions"].size(), 6u);
  double total = 0;
  for (const auto& n : r["iteration_samples"]) total += n.get<double>();
  EXPECT_DOUBLE_EQ(total, r["throughput"]["samples"].get<double>());
  // One warm-up batch (2), then 3, 4, 2 | 3, 4, 2: the batches vary.
  EXPECT_EQ(r["iteration_samples"][0], 3);
  EXPECT_EQ(r["iteration_samples"][1], 4);
  EXPECT_EQ(r["iteration_repetitions"][3], 1);
}

TEST(Runner, ThroughputIntervalIsOverRepetitions) {
  RunOptions o = tiny_run(2, 1);
  o.repeat = 3;
  const auto r = testing::run_registered(o, {}).result;
  EXPECT_EQ(r["throughput"]["ci95_over"], "repetitions");
  EXPECT_TRUE(r["throughput"]["repetition_cv"].is_number());
  const auto one = testing::run_registered(tiny_run(3, 1), {}).result;
  EXPECT_EQ(one["throughput"]["ci95_over"], "iterations");
  EXPECT_TRUE(one["throughput"]["repetition_cv"].is_null());
}

TEST(Runner, ResultsRecordTimingConditionsAndTheBatchUnit) {
  const auto r = testing::run_registered(tiny_run(2, 0), {}).result;
  ASSERT_TRUE(r.contains("timing_conditions"));
  EXPECT_TRUE(r["timing_conditions"]["start"].contains("load1"));
  EXPECT_TRUE(r["timing_conditions"].contains("busy_processes"));
  EXPECT_TRUE(r["timing_conditions"].contains("pinned"));
  EXPECT_TRUE(r.contains("warnings"));
  EXPECT_EQ(r["workload"]["batch_unit"], "images");
}

TEST(Runner, CudnnAutotunesOnlyRepeatingShapesOnCuda) {
  WorkloadInfo fixed, varying;
  varying.variable_shapes = true;
  const c10::Device cuda(c10::kCUDA, 0), cpu(c10::kCPU);
  EXPECT_TRUE(cudnn_autotuning_for(cuda, fixed));
  EXPECT_FALSE(cudnn_autotuning_for(cuda, varying));
  EXPECT_FALSE(cudnn_autotuning_for(cpu, fixed));
  const auto r = testing::run_registered(tiny_run(1, 0), {}).result;
  EXPECT_EQ(r["framework"]["cudnn_benchmark"], false);
  EXPECT_EQ(r["workload"]["variable_shapes"], false);
}

TEST(Runner, TitlesAndSettingsFollowWhatRan) {
  RunOptions o = tiny_run(1, 0);
  o.settings = {{"depth", "101"}};
  const auto r = testing::run_registered(o, {}).result;
  EXPECT_NE(r["workload"]["model"].get<std::string>().find("ResNet-101"), std::string::npos) << r["workload"]["model"];
  RunOptions g = tiny_run(1, 0);
  g.workload = "gpt";
  g.batch_size = 1;
  EXPECT_EQ(testing::run_registered(g, {}).result["workload"]["batch_unit"], "sequences");
  RunOptions a = tiny_run(1, 0);
  a.workload = "a3c";
  a.batch_size = 1;
  // t_max is unset, so tiny resolves it to 5; the record says what ran.
  const auto ar = testing::run_registered(a, {}).result;
  EXPECT_EQ(ar["workload"]["settings"]["t_max"], "5");
  EXPECT_EQ(ar["workload"]["configuration"]["t_max"], 5);
  EXPECT_EQ(ar["workload"]["batch_unit"], "worker threads");
}

TEST(Runner, DivergenceHintsUseTheWorkloadsOwnSettings) {
  Spy spy;  // declares no setting at all, and runs in fp32
  spy.nan_loss = true;
  const std::string msg = error_of<Error>([&] { run_benchmark(tiny_run(2, 0), spy, {}); });
  EXPECT_NE(msg.find("diverged; lower the learning rate"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("--set"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("--precision fp32"), std::string::npos) << msg;  // it already ran in fp32
}

TEST(Runner, NonFiniteInputsAreNamedBeforeTheLearningRateIsBlamed) {
  Spy spy;
  spy.nan_input = true;  // the loss becomes NaN because the data holds one
  RunOptions o = tiny_run(2, 0);
  o.data_path = "/data/clips";
  const std::string msg = error_of<Error>([&] { run_benchmark(o, spy, {}); });
  EXPECT_NE(msg.find("input batch holds NaN or infinite values (input 0: 1 of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the data, not the model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/data/clips"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("learning rate"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tbd
