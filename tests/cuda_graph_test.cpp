// --cuda-graphs: which runs a graph may replay (the refusals, on every
// machine), and on a GPU that the captured step trains as the eager one,
// loss for loss.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <optional>

#include "tbd/core/error.h"
#include "tbd/core/rng.h"
#include "tbd/measure/cuda_graph_step.h"
#include "tbd/workloads/registry.h"
#include "test_util.h"

namespace tbd {
namespace {

const c10::Device kCuda(c10::kCUDA, 0);

RunOptions options_for(const std::string& workload, CudaGraphs graphs = CudaGraphs::on) {
  RunOptions o;
  o.workload = workload;
  o.device = "cuda";
  o.cuda_graphs = graphs;
  return o;
}

// The refusal (empty: none) of a single-process CUDA run of `workload`.
std::string refusal(const std::string& workload, const RunOptions& o) {
  return cuda_graph_refusal(create_workload(workload)->info(), o, kCuda, /*data_parallel=*/false);
}

TEST(CudaGraphs, ParsedAndNamed) {
  EXPECT_EQ(parse_cuda_graphs("auto"), CudaGraphs::automatic);
  EXPECT_STREQ(to_string(parse_cuda_graphs("on")), "on");
  const std::string why = testing::error_of<UsageError>([] { parse_cuda_graphs("yes"); });
  EXPECT_NE(why.find("off, on or auto"), std::string::npos) << why;
}

// The fixed-shape, dense-gradient, single-optimizer-schedule workloads are
// captured; each of the others is refused with its own reason.
TEST(CudaGraphs, EachWorkloadIsCapturedOrRefusedWithItsReason) {
  for (const std::string w : {"resnet50", "inception3", "ncf", "gpt", "wgan"})
    EXPECT_EQ(refusal(w, options_for(w)), "") << w;
  const std::map<std::string, std::string> reasons = {
      {"llama", "learning rate"},      {"transformer", "change shape"}, {"seq2seq", "change shape"},
      {"deepspeech2", "change shape"}, {"dlrm", "sparse gradients"},    {"faster_rcnn", "non-maximum suppression"},
      {"a3c", "worker threads"}};
  for (const auto& [w, reason] : reasons) {
    const std::string why = refusal(w, options_for(w));
    EXPECT_NE(why.find(reason), std::string::npos) << w << ": " << why;
    EXPECT_EQ(why.rfind(w, 0), 0u) << "names the workload: " << why;
  }
  EXPECT_EQ(workload_names().size(), 5 + reasons.size()) << "a new workload: decide whether it is captured";
}

// What a run asks for can refuse a workload that is captured otherwise.
TEST(CudaGraphs, OptionsThatAGraphWouldFreezeAreRefused) {
  const WorkloadInfo& gpt = create_workload("gpt")->info();
  RunOptions o = options_for("gpt");
  EXPECT_NE(cuda_graph_refusal(gpt, o, c10::Device(c10::kCPU), false).find("on the cpu"), std::string::npos);
  EXPECT_NE(cuda_graph_refusal(gpt, o, kCuda, /*data_parallel=*/true).find("data-parallel"), std::string::npos);
  o.precision = Precision::fp16;
  EXPECT_NE(cuda_graph_refusal(gpt, o, kCuda, false).find("loss scaling"), std::string::npos);
  o.precision = Precision::bf16;
  EXPECT_EQ(cuda_graph_refusal(gpt, o, kCuda, false), "");
  o.optimizer_impl = OptimizerImpl::foreach;
  EXPECT_NE(cuda_graph_refusal(gpt, o, kCuda, false).find("--optimizer-impl foreach"), std::string::npos);
  o.optimizer_impl = OptimizerImpl::fused;
  o.activation_checkpointing = parse_activation_checkpointing("full");
  EXPECT_NE(cuda_graph_refusal(gpt, o, kCuda, false).find("random generators"), std::string::npos);
}

TEST(CudaGraphs, OnIsRefusedAutoFallsBackOffAsksNothing) {
  const WorkloadInfo& llama = create_workload("llama")->info();
  const std::string why = testing::error_of<UsageError>(
      [&] { decide_cuda_graphs(llama, options_for("llama", CudaGraphs::on), kCuda, false); });
  EXPECT_NE(why.find("--cuda-graphs on: llama sets its learning rate"), std::string::npos) << why;
  EXPECT_NE(why.find("--cuda-graphs off"), std::string::npos) << "names the fix: " << why;
  const auto fallback = decide_cuda_graphs(llama, options_for("llama", CudaGraphs::automatic), kCuda, false);
  EXPECT_FALSE(fallback.use);
  EXPECT_NE(fallback.reason.find("learning rate"), std::string::npos);
  const auto off = decide_cuda_graphs(llama, options_for("llama", CudaGraphs::off), kCuda, false);
  EXPECT_FALSE(off.use);
  EXPECT_EQ(off.reason, "");
  EXPECT_TRUE(
      decide_cuda_graphs(create_workload("ncf")->info(), options_for("ncf", CudaGraphs::automatic), kCuda, false).use);
}

// A CPU run: on is refused before anything is built; auto runs eagerly and
// the result says why.
TEST(CudaGraphs, CpuRunRefusesOnAndRecordsWhyAutoRanEagerly) {
  RunOptions o = testing::tiny_resnet(2, 1, 0);
  o.cuda_graphs = CudaGraphs::on;
  const std::string why = testing::error_of<UsageError>([&] { testing::run_registered(o, {}); });
  EXPECT_NE(why.find("this run is on the cpu"), std::string::npos) << why;
  o.cuda_graphs = CudaGraphs::automatic;
  const auto outcome = testing::run_registered(o, {});
  const auto& g = outcome.result["framework"]["cuda_graphs"];
  EXPECT_EQ(g["requested"], "auto");
  EXPECT_FALSE(g["used"].get<bool>());
  EXPECT_NE(g["reason"].get<std::string>().find("on the cpu"), std::string::npos);
  EXPECT_EQ(outcome.result["workload"]["options"]["cuda_graphs"], "auto");
  bool said = false;
  for (const auto& [key, text] : outcome.summary) said = said || (key == "cuda graphs" && text.find("not used") == 0);
  EXPECT_TRUE(said) << "the summary says graphs were not used";
}

#define SKIP_WITHOUT_CUDA()                                                                 \
  if (!torch::cuda::is_available())                                                         \
  GTEST_SKIP() << "needs a CUDA device (this LibTorch has no CUDA, or no GPU is visible); " \
                  "run scripts/gpu-check on a GPU machine"

// `steps` training losses of a tiny `workload` on the GPU in fp32 (TF32 and
// cuDNN's autotuner off, so eager and captured kernels are the same ones),
// eagerly or through a CudaGraphStep.
std::vector<double> gpu_losses(const std::string& workload, bool graphed, int steps) {
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setBenchmarkCuDNN(false);
  RunOptions o = options_for(workload);
  o.scale = Scale::tiny;
  o.data_workers = 1;
  auto w = create_workload(workload);
  o.batch_size = std::min<int64_t>(w->info().default_batch, 16);
  seed_everything(o.seed);
  w->setup(o, Settings(w->info().settings, {}, workload), kCuda);
  Phases phases(kCuda, c10::ScalarType::Float);
  std::optional<CudaGraphStep> graph;
  if (graphed) graph.emplace(kCuda);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    const std::vector<Batch> batches = {w->next_batch()};
    const StepOutput out = graphed ? graph->run(*w, batches, phases) : w->step(batches, phases);
    losses.push_back(out.loss.item<double>());
  }
  if (graphed) EXPECT_TRUE(graph->captured()) << workload;
  return losses;
}

TEST(CudaGraphsGpu, TheCapturedStepTrainsAsTheEagerOneLossForLoss) {
  SKIP_WITHOUT_CUDA();
  constexpr int kSteps = CudaGraphStep::kEagerIterations + 5;  // the capture, then four replays
  for (const std::string w : {"ncf", "gpt", "resnet50", "inception3", "wgan"}) {
    const auto eager = gpu_losses(w, false, kSteps);
    const auto graphed = gpu_losses(w, true, kSteps);
    ASSERT_EQ(eager.size(), graphed.size());
    for (size_t i = 0; i < eager.size(); ++i)
      EXPECT_NEAR(graphed[i], eager[i], 1e-4 * std::abs(eager[i]) + 1e-6) << w << " step " << i + 1;
  }
}

// Through the runner: warm-up goes on until the step is captured, and every
// timed iteration replays it.
TEST(CudaGraphsGpu, RunCapturesInWarmUpAndReplaysEveryTimedIteration) {
  SKIP_WITHOUT_CUDA();
  RunOptions o = options_for("ncf");
  o.scale = Scale::tiny;
  o.warmup = 1;
  o.iters = 4;
  o.repeat = 2;
  o.quiet = true;
  const auto r = testing::run_registered(o, {}).result;
  const auto& g = r["framework"]["cuda_graphs"];
  EXPECT_TRUE(g["used"].get<bool>());
  EXPECT_TRUE(g["captured"].get<bool>());
  EXPECT_EQ(r["warmup"]["iterations"], CudaGraphStep::kEagerIterations + 1);
  EXPECT_EQ(r["warmup"]["ended_by"], "cuda graph");
  EXPECT_EQ(g["replays"], 1 + 8) << "the capture's iteration and the eight timed ones";
  EXPECT_EQ(g["eager_iterations_of_other_shapes"], 0);
}

}  // namespace
}  // namespace tbd
