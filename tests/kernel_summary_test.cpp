#include <gtest/gtest.h>

#include "tbd/measure/ops/kernel_summary.h"

namespace tbd {
namespace {

using Kind = DeviceActivity::Kind;

DeviceActivity act(const std::string& name, Kind kind, uint64_t start_us, uint64_t end_us) {
  return {name, kind, start_us * 1000, end_us * 1000};
}

TEST(KernelSummary, BusyShareCountsOverlappingKernelsOnce) {
  // Two iterations in 1 ms of wall time. Kernels on two streams overlap
  // (100–300 and 200–400 µs): busy 300 µs, not 400; the copy is not a kernel.
  const std::vector<DeviceActivity> a = {
      act("gemm", Kind::kernel, 100, 300),
      act("relu", Kind::kernel, 200, 400),
      act("gemm", Kind::kernel, 600, 700),
      act("Memcpy HtoD", Kind::memcpy, 0, 100),
  };
  const auto k = summarize_kernels(a, 1e-3, 2);
  EXPECT_NEAR(k["kernel_busy_share"].get<double>(), 0.4, 1e-9);                 // 300 + 100 µs of 1000
  EXPECT_NEAR(k["kernel_seconds_per_iteration"].get<double>(), 250e-6, 1e-12);  // 500 µs / 2
  EXPECT_NEAR(k["memcpy_seconds_per_iteration"].get<double>(), 50e-6, 1e-12);
  EXPECT_DOUBLE_EQ(k["kernels_per_iteration"].get<double>(), 1.5);
  EXPECT_EQ(k["distinct_kernels"], 2);
  // Ranked by total time: gemm 300 µs (2 calls), relu 200 µs.
  const auto& top = k["top_kernels"];
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0]["name"], "gemm");
  EXPECT_DOUBLE_EQ(top[0]["calls_per_iteration"].get<double>(), 1.0);
  EXPECT_NEAR(top[0]["mean_us"].get<double>(), 150.0, 1e-9);
  EXPECT_NEAR(top[0]["share_of_kernel_time"].get<double>(), 0.6, 1e-9);
  EXPECT_EQ(top[1]["name"], "relu");
}

TEST(KernelSummary, KeepsOnlyTheTopKernels) {
  std::vector<DeviceActivity> a;
  for (int i = 0; i < 20; ++i) a.push_back(act("k" + std::to_string(i), Kind::kernel, 10 * i, 10 * i + i + 1));
  const auto k = summarize_kernels(a, 1.0, 1, 5);
  ASSERT_EQ(k["top_kernels"].size(), 5u);
  EXPECT_EQ(k["top_kernels"][0]["name"], "k19");  // the longest
  EXPECT_EQ(k["distinct_kernels"], 20);
}

TEST(KernelSummary, SaysWhyWithoutKernels) {
  const auto none = summarize_kernels({act("Memcpy DtoH", Kind::memcpy, 0, 5)}, 1.0, 3);
  EXPECT_TRUE(none["kernel_busy_share"].is_null());
  EXPECT_NE(none["not_available"].get<std::string>().find("no device kernel"), std::string::npos);
  const auto no_time = summarize_kernels({act("gemm", Kind::kernel, 0, 5)}, 0.0, 3);
  EXPECT_TRUE(no_time["kernel_busy_share"].is_null());
}

}  // namespace
}  // namespace tbd
