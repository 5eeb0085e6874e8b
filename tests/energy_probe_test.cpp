// energy and gpu probes without hardware: a fake powercap tree for RAPL, and
// an NVML library that is not there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tbd/core/options.h"
#include "tbd/core/workload.h"
#include "tbd/measure/machine/nvml.h"
#include "tbd/measure/machine/rapl.h"
#include "tbd/measure/probes/energy_probe.h"
#include "tbd/measure/probes/gpu_probe.h"
#include "tbd/workloads/registry.h"

namespace tbd {
namespace {

namespace fs = std::filesystem;

class FakePowercap : public ::testing::Test {
 public:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tbd_powercap_" + std::to_string(getpid()));
    zone("intel-rapl:0", "package-0", 9'000'000, 10'000'000);
    zone("intel-rapl:0:0", "core", 5, 10'000'000);  // a sub-zone: part of package 0
    zone("intel-rapl:1", "package-1", 100, 10'000'000);
  }
  void TearDown() override { fs::remove_all(root_); }
  void zone(const std::string& dir, const std::string& name, uint64_t uj, uint64_t max) {
    fs::create_directories(root_ / dir);
    std::ofstream(root_ / dir / "name") << name << "\n";
    set(dir, uj);
    std::ofstream(root_ / dir / "max_energy_range_uj") << max << "\n";
  }
  void set(const std::string& dir, uint64_t uj) { std::ofstream(root_ / dir / "energy_uj") << uj << "\n"; }
  fs::path root_;
};

TEST(Rapl, CounterDeltaHandlesWrapAround) {
  EXPECT_EQ(counter_delta(100, 250, 1000), 150u);
  EXPECT_EQ(counter_delta(900, 100, 1000), 200u);  // wrapped at 1000
}

TEST_F(FakePowercap, PackagesOnlyAndWrapAround) {
  Rapl rapl(root_.string());
  ASSERT_TRUE(rapl.available()) << rapl.why();
  EXPECT_EQ(rapl.zone_names().size(), 2u);  // the core sub-zone is not counted again
  rapl.sample();
  set("intel-rapl:0", 1'000'000);  // wrapped: 9 J → 10 J (= 0) → 1 J: 2 J
  set("intel-rapl:0:0", 9'999'999);
  set("intel-rapl:1", 3'000'100);  // 3 J
  rapl.sample();
  EXPECT_NEAR(rapl.joules(), 5.0, 1e-9);
}

TEST_F(FakePowercap, UnreadableCounterSaysWhy) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files regardless of their mode";
  fs::permissions(root_ / "intel-rapl:0" / "energy_uj", fs::perms::none);
  fs::permissions(root_ / "intel-rapl:1" / "energy_uj", fs::perms::none);
  Rapl rapl(root_.string());
  EXPECT_FALSE(rapl.available());
  EXPECT_NE(rapl.why().find("cannot read"), std::string::npos);
}

TEST(Rapl, MissingPowercapSaysWhy) {
  Rapl rapl("/nonexistent/powercap");
  EXPECT_FALSE(rapl.available());
  EXPECT_NE(rapl.why().find("does not exist"), std::string::npos);
}

TEST(Nvml, AbsentLibraryIsNotAvailableWithReason) {
  Nvml nvml("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.why().find("NVML not found"), std::string::npos);
  EXPECT_EQ(nvml.device_count(), 0);
}

// Drives a probe through one window of two iterations as the runner would.
template <typename P>
nlohmann::json one_window(P& probe, FakePowercap* fake) {
  auto workload = create_workload("resnet50");
  RunOptions options;
  RunContext ctx{options, workload->info(), *workload, c10::Device(c10::kCPU)};
  probe.on_run_start(ctx);
  probe.on_window_begin(0);
  for (int i = 0; i < 2; ++i) {
    if (fake) fake->set("intel-rapl:0", 9'000'000 + 600'000 * static_cast<uint64_t>(i + 1));  // 0.6 J each
    IterationRecord r;
    r.measured = true;
    r.samples = 4;
    r.seconds = 0.5;
    probe.on_iteration_end(r);
  }
  probe.on_window_end(0);
  probe.on_run_end(ctx);
  nlohmann::json result;
  probe.contribute(result);
  return result;
}

TEST_F(FakePowercap, EnergyProbeJoulesPerSample) {
  EnergyProbe probe(root_.string(), "/nonexistent/libnvidia-ml.so.1");
  const auto e = one_window(probe, this)["energy"];
  EXPECT_NEAR(e["joules"].get<double>(), 1.2, 1e-9);
  EXPECT_NEAR(e["joules_per_sample"].get<double>(), 1.2 / 8, 1e-9);
  EXPECT_NEAR(e["average_watts"].get<double>(), 1.2, 1e-9);
  EXPECT_TRUE(e["sources"]["nvml"]["joules"].is_null());
  EXPECT_FALSE(e["sources"]["nvml"]["not_available"].get<std::string>().empty());
}

TEST(EnergyProbe, NoSourceIsNotAvailableNotZero) {
  EnergyProbe probe("/nonexistent/powercap", "/nonexistent/libnvidia-ml.so.1");
  const auto e = one_window(probe, nullptr)["energy"];
  EXPECT_TRUE(e["joules_per_sample"].is_null());
  EXPECT_NE(e["not_available"].get<std::string>().find("does not exist"), std::string::npos);
  EXPECT_EQ(probe.summary_lines().at(0).second.rfind("n/a (", 0), 0u);
}

TEST(GpuProbe, AbsentNvmlIsNotAvailableWithReason) {
  GpuProbe probe("/nonexistent/libnvidia-ml.so.1");
  const auto g = one_window(probe, nullptr)["gpu"];
  EXPECT_NE(g["not_available"].get<std::string>().find("NVML not found"), std::string::npos);
  EXPECT_EQ(probe.summary_lines().at(0).second.rfind("n/a (", 0), 0u);
}

}  // namespace
}  // namespace tbd
