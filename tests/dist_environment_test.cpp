#include <gtest/gtest.h>

#include <map>

#include "tbd/core/error.h"
#include "tbd/dist/dist_environment.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;

DistEnvironment read(std::map<std::string, std::string> vars) {
  return read_dist_environment([&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(DistEnvironment, NothingSetMeansOneProcess) {
  const DistEnvironment e = read({});
  EXPECT_FALSE(e.distributed());
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.source, "none");
}

TEST(DistEnvironment, ReadsTorchrunVariables) {
  const DistEnvironment e = read({{"RANK", "3"},
                                  {"WORLD_SIZE", "8"},
                                  {"LOCAL_RANK", "1"},
                                  {"LOCAL_WORLD_SIZE", "2"},
                                  {"MASTER_ADDR", "node7"},
                                  {"MASTER_PORT", "29511"}});
  EXPECT_TRUE(e.distributed());
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.master_addr, "node7");
  EXPECT_EQ(e.master_port, 29511);
  EXPECT_EQ(e.source, "torchrun");
}

TEST(DistEnvironment, ReadsSlurmVariables) {
  const DistEnvironment e = read({{"SLURM_PROCID", "5"},
                                  {"SLURM_NTASKS", "16"},
                                  {"SLURM_LOCALID", "1"},
                                  {"SLURM_STEP_NODELIST", "gpu[012-015],cpu3"}});
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.master_addr, "gpu012");
  EXPECT_EQ(e.source, "slurm");
}

TEST(DistEnvironment, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node[01-04]"), "node01");
  EXPECT_EQ(first_slurm_host("a[7,9],b"), "a7");
  EXPECT_EQ(first_slurm_host("alpha,beta"), "alpha");
  EXPECT_EQ(first_slurm_host("solo"), "solo");
}

TEST(DistEnvironment, RejectsInconsistentCombinations) {
  EXPECT_NE(error_of<UsageError>([] {
              read({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}});
            }).find("rank 2 is not below the world size 2"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              read({{"WORLD_SIZE", "4"}, {"MASTER_ADDR", "h"}});
            }).find("RANK is not"),
            std::string::npos);
  // RANK alone used to run one rank silently (RANK=0) or blame the world size (RANK=1).
  for (const char* rank : {"0", "1"})
    EXPECT_NE(error_of<UsageError>([rank] {
                read({{"RANK", rank}});
              }).find("WORLD_SIZE is not"),
              std::string::npos)
        << rank;
  EXPECT_NE(error_of<UsageError>([] {
              read({{"RANK", "0"}, {"WORLD_SIZE", "two"}});
            }).find("WORLD_SIZE='two'"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              read({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
            }).find("MASTER_ADDR"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}});
            }).find("MASTER_PORT"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] {
              read({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}});
            }).find("SLURM_PROCID"),
            std::string::npos);
}

}  // namespace
}  // namespace tbd
