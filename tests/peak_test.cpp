// Peak FLOP/s: instruction-rate rules, the datasheet table, the cache file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tbd/measure/machine/peak.h"
#include "tbd/measure/runner.h"
#include "test_util.h"

namespace tbd {
namespace {

TEST(Peak, CpuFlopsPerCycleFromIsa) {
  std::string why;
  EXPECT_EQ(cpu_flops_per_cycle("GenuineIntel", 6, "sse avx avx2 fma avx512f", "fp32", why), 64);
  EXPECT_EQ(cpu_flops_per_cycle("AuthenticAMD", 25, "avx avx2 fma avx512f", "fp32", why), 32);  // Zen 4
  EXPECT_EQ(cpu_flops_per_cycle("GenuineIntel", 6, "avx avx2 fma", "fp32", why), 32);
  EXPECT_EQ(cpu_flops_per_cycle("GenuineIntel", 6, "avx avx2 fma amx_bf16", "bf16", why), 2048);
  EXPECT_EQ(cpu_flops_per_cycle("GenuineIntel", 6, "avx avx2 fma", "bf16", why), 0);
  EXPECT_FALSE(why.empty());
}

TEST(Peak, GpuDatasheetTable) {
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA H100 80GB HBM3", "bf16"), 989e12);
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA H100 PCIe", "fp32"), 51e12);
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA H100 NVL", "bf16"), 835e12);  // not the SXM part's 989
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA B200", "bf16"), 2250e12);
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA H200", "tf32"), 495e12);
  EXPECT_DOUBLE_EQ(gpu_datasheet_flops("NVIDIA A100-SXM4-40GB", "fp32"), 19.5e12);
  EXPECT_EQ(gpu_datasheet_flops("Some Future GPU", "fp32"), 0);
}

class PeakCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tbd_peak_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    setenv("TBD_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TBD_CACHE_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(PeakCache, PathFollowsTbdCacheDir) { EXPECT_EQ(peak_cache_path(), (dir_ / "peak.json").string()); }

TEST_F(PeakCache, RunWithoutMeasurementSaysHowToGetOne) {
  const auto p = peaks_for_run(c10::kCPU, 1, "fp32");
  EXPECT_TRUE(p["measured"]["flops_per_s"].is_null());
  EXPECT_NE(p["measured"]["not_available"].get<std::string>().find("tbd env --peak"), std::string::npos);
}

TEST_F(PeakCache, MeasuredPeakRoundTripsPerMachineKey) {
  GemmPeakOptions o;
  o.size = 96;
  o.trial_seconds = 0.005;
  o.min_trials = 3;
  o.max_trials = 5;
  const auto m = measure_gemm_peak(c10::kCPU, "fp32", o);
  ASSERT_TRUE(m["flops_per_s"].is_number());
  EXPECT_GT(m["flops_per_s"].get<double>(), 1e6);
  EXPECT_GE(m["trials"].get<int>(), 3);
  const std::string key = peak_machine_key(c10::kCPU, 1);
  store_cached_peak(key, {{"fp32", m}});
  const auto back = load_cached_peak(key, "fp32");
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ((*back)["flops_per_s"].get<double>(), m["flops_per_s"].get<double>());
  EXPECT_FALSE(load_cached_peak(peak_machine_key(c10::kCPU, 2), "fp32").has_value());  // other thread count
  const auto run = peaks_for_run(c10::kCPU, 1, "fp32");
  EXPECT_DOUBLE_EQ(run["measured"]["flops_per_s"].get<double>(), m["flops_per_s"].get<double>());
}

TEST_F(PeakCache, UtilisationAbove100PercentSaysWhy) {
  // A measured "peak" far below what any step achieves.
  store_cached_peak(peak_machine_key(c10::kCPU, 1),
                    {{"fp32", {{"flops_per_s", 1.0}, {"dtype", "fp32"}, {"measured_utc", "2026-01-01T00:00:00Z"}}}});
  RunOptions o = testing::tiny_resnet(2, 1, 0);
  o.threads = 1;
  const auto r = testing::run_registered(o, {"flops"}).result;
  const auto& u = r["flops"]["utilization"];
  ASSERT_TRUE(u["measured"].is_number());
  EXPECT_GT(u["measured"].get<double>(), 1.0);
  EXPECT_NE(u.value("measured_above_100_percent", std::string()).find("re-measure"), std::string::npos) << u.dump();
}

TEST(Peak, CpuDatasheetSaysWhichClockItAssumes) {
  const auto d = datasheet_peak(c10::kCPU, "fp32", 1);
  if (d["flops_per_s"].is_null()) GTEST_SKIP() << d["not_available"];
  const std::string basis = d["clock_basis"];
  const bool cpufreq = std::filesystem::exists("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  EXPECT_EQ(basis, cpufreq ? "maximum" : "reported");
  EXPECT_NE(d["assumptions"].get<std::string>().find(cpufreq ? "maximum boost clock" : "not the maximum boost"),
            std::string::npos);
}

TEST_F(PeakCache, DamagedCacheIsIgnored) {
  std::ofstream(dir_ / "peak.json") << "{ not json";
  EXPECT_FALSE(load_cached_peak(peak_machine_key(c10::kCPU, 1), "fp32").has_value());
}

TEST(Peak, CpuDatasheetIsCoresTimesClockTimesIsa) {
  const auto d1 = datasheet_peak(c10::kCPU, "fp32", 1), d2 = datasheet_peak(c10::kCPU, "fp32", 2);
  if (d1["flops_per_s"].is_null()) GTEST_SKIP() << d1["not_available"];
  EXPECT_DOUBLE_EQ(d2["flops_per_s"].get<double>(), 2 * d1["flops_per_s"].get<double>());
  EXPECT_NE(d1["provenance"].get<std::string>().find("GHz"), std::string::npos);
}

}  // namespace
}  // namespace tbd
