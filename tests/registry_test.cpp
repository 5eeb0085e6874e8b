#include <gtest/gtest.h>

#include "tbd/core/error.h"
#include "tbd/workloads/registry.h"
#include "test_util.h"

namespace tbd {
namespace {

TEST(Registry, UnknownWorkloadNamesTheKnownOnes) {
  const std::string msg = testing::error_of<UsageError>([] { create_workload("nosuch"); });
  EXPECT_NE(msg.find("nosuch"), std::string::npos);
  for (const auto& name : workload_names()) EXPECT_NE(msg.find(name), std::string::npos) << name;
}

TEST(Registry, EveryWorkloadDescribesItself) {
  ASSERT_FALSE(workload_registry().empty());
  for (const auto& entry : workload_registry()) {
    const auto w = entry.create();
    const WorkloadInfo& info = w->info();
    EXPECT_EQ(info.name, entry.name);
    EXPECT_FALSE(info.domain.empty()) << entry.name;
    EXPECT_FALSE(info.model.empty()) << entry.name;
    EXPECT_FALSE(info.dataset.empty()) << entry.name;
    EXPECT_FALSE(info.sample_unit.empty()) << entry.name;
    EXPECT_GT(info.default_batch, 0) << entry.name;
    // Defaults must pass their own validation.
    EXPECT_NO_THROW(Settings(info.settings, {}, info.name)) << entry.name;
  }
}

}  // namespace
}  // namespace tbd
