// The CUDA path. Tests that need a GPU skip on machines without one, saying
// why; the CPU-side halves (what a CPU run reports instead) always run.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>

#include "tbd/measure/machine/device.h"
#include "tbd/measure/machine/peak.h"
#include "tbd/measure/runner.h"
#include "test_util.h"

namespace tbd {
namespace {

#define SKIP_WITHOUT_CUDA()                                                                 \
  if (!torch::cuda::is_available())                                                         \
  GTEST_SKIP() << "needs a CUDA device (this LibTorch has no CUDA, or no GPU is visible); " \
                  "run scripts/gpu-check on a GPU machine"

RunOptions tiny_run(const std::string& device, Precision precision = Precision::fp32) {
  RunOptions o = testing::tiny_resnet(8, 4, 1);
  o.repeat = RunOptions{}.repeat;  // the default five windows
  o.device = device;
  o.precision = precision;
  return o;
}

TEST(Device, PlainCudaMeansTheRanksOwnGpu) {
  EXPECT_EQ(device_for_rank("cuda", 1), "cuda:1");
  EXPECT_EQ(device_for_rank("cuda", -1), "cuda");     // not distributed
  EXPECT_EQ(device_for_rank("cuda:3", 1), "cuda:3");  // an explicit choice is kept
  EXPECT_EQ(device_for_rank("cpu", 2), "cpu");
}

TEST(Device, TimerMeasuresNothingOnTheCpu) {
  DeviceTimer t(c10::Device(c10::kCPU));
  t.start();
  t.stop();
  EXPECT_FALSE(t.seconds().has_value());
}

TEST(Device, CpuRunsSayWhyGpuFiguresAreMissing) {
  const auto r = testing::run_registered(tiny_run("cpu"), {"memory", "gpu"}).result;
  EXPECT_TRUE(r["device_time"]["mean_s"].is_null());
  EXPECT_NE(r["device_time"]["not_available"].get<std::string>().find("CUDA"), std::string::npos);
  EXPECT_TRUE(r["memory"]["cuda_allocator"].contains("not_available"));
  EXPECT_TRUE(r["gpu"]["kernel_busy_share"].is_null());
  EXPECT_NE(r["gpu"]["kernels"]["not_available"].get<std::string>().find("not on a CUDA device"), std::string::npos);
}

TEST(Peak, CpuHasNoTf32OrFp16GemmPeak) {
  EXPECT_EQ(peak_dtypes(c10::Device(c10::kCPU)), (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_TRUE(measure_gemm_peak(c10::kCPU, "tf32")["flops_per_s"].is_null());
  EXPECT_TRUE(measure_gemm_peak(c10::kCPU, "fp16")["flops_per_s"].is_null());
}

TEST(Gpu, EventTimerSeesTheQueuedWork) {
  SKIP_WITHOUT_CUDA();
  const c10::Device cuda(c10::kCUDA, 0);
  auto a = torch::randn({4096, 4096}, torch::TensorOptions().device(cuda));
  synchronize(cuda);
  DeviceTimer t(cuda);
  const auto t0 = std::chrono::steady_clock::now();
  t.start();
  for (int i = 0; i < 5; ++i) a = torch::mm(a, a).tanh_();
  t.stop();
  synchronize(cuda);
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(t.seconds().has_value());
  EXPECT_GT(*t.seconds(), 0.0);
  EXPECT_LE(*t.seconds(), host * 1.01);  // device time lies inside the host span
}

TEST(Gpu, RunReportsDeviceTimeAllocatorAndKernels) {
  SKIP_WITHOUT_CUDA();
  const auto o = tiny_run("cuda");
  const auto r = testing::run_registered(o, {"memory", "gpu", "flops"}).result;
  // Every timed iteration of every repetition, as the host times them.
  EXPECT_EQ(r["device_time"]["n"], o.iters * o.repeat);
  EXPECT_GT(r["device_time"]["median_s"].get<double>(), 0.0);
  const auto& alloc = r["memory"]["cuda_allocator"];
  ASSERT_TRUE(alloc.contains("reserved_peak_bytes")) << alloc.dump();
  EXPECT_GT(alloc["allocated_peak_bytes"].get<int64_t>(), 0);
  EXPECT_GE(alloc["reserved_peak_bytes"].get<int64_t>(), alloc["allocated_peak_bytes"].get<int64_t>());
  // The probe's tracked peak is a subset of what the allocator handed out.
  EXPECT_GT(r["memory"]["peak_bytes"].get<int64_t>(), 0);
  EXPECT_LE(r["memory"]["peak_bytes"].get<double>(), 1.05 * alloc["allocated_peak_bytes"].get<double>() + 1e6);
  const auto& k = r["gpu"]["kernels"];
  ASSERT_TRUE(k["kernel_busy_share"].is_number()) << k.dump();
  EXPECT_GT(k["kernel_busy_share"].get<double>(), 0.0);
  EXPECT_LE(k["kernel_busy_share"].get<double>(), 1.0);
  EXPECT_FALSE(k["top_kernels"].empty());
}

TEST(Gpu, Fp16RunsWithLossScaling) {
  SKIP_WITHOUT_CUDA();
  const auto r = testing::run_registered(tiny_run("cuda", Precision::fp16), {}).result;
  EXPECT_EQ(r["workload"]["options"]["precision"], "fp16");
  EXPECT_GT(r["loss_scaling"]["final_scale"].get<double>(), 0.0);
  EXPECT_TRUE(r["loss"]["last_measured"].is_number());
}

TEST(Gpu, Bf16AndTf32Run) {
  SKIP_WITHOUT_CUDA();
  for (Precision p : {Precision::bf16, Precision::tf32}) {
    const auto r = testing::run_registered(tiny_run("cuda", p), {}).result;
    EXPECT_EQ(r["workload"]["options"]["precision"], to_string(p));
    EXPECT_TRUE(r["loss"]["last_measured"].is_number());
  }
}

TEST(Gpu, GemmPeakForEveryPrecision) {
  SKIP_WITHOUT_CUDA();
  const c10::Device cuda(c10::kCUDA, 0);
  GemmPeakOptions quick;
  quick.size = 2048;
  quick.trial_seconds = 0.05;
  quick.min_trials = 2;
  quick.max_trials = 3;
  EXPECT_EQ(peak_dtypes(cuda).size(), 4u);
  for (const auto& dtype : peak_dtypes(cuda)) {
    const auto m = measure_gemm_peak(cuda, dtype, quick);
    ASSERT_TRUE(m["flops_per_s"].is_number()) << dtype << ": " << m.dump();
    EXPECT_GT(m["flops_per_s"].get<double>(), 0.0) << dtype;
    EXPECT_EQ(m["dtype"], dtype);
  }
}

}  // namespace
}  // namespace tbd
