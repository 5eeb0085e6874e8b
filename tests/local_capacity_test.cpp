// `--nproc N` beyond what this machine's CPUs and memory hold is refused
// with the reason (the CLI adds the override, --oversubscribe).
#include <gtest/gtest.h>

#include "tbd/core/error.h"
#include "tbd/dist/local_capacity.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;

TEST(LocalCapacity, RanksBeyondTheCpusAreRefusedOnTheCpuOnly) {
  const LocalCapacity two_cores{2, int64_t{24} << 30};
  EXPECT_EQ(local_ranks_refusal(2, true, two_cores), "");
  const std::string why = local_ranks_refusal(1000, true, two_cores);
  EXPECT_NE(why.find("1000 ranks on 2 CPUs would only share them"), std::string::npos) << why;
  EXPECT_NE(why.find("use --nproc 2 or fewer"), std::string::npos) << why;
  EXPECT_EQ(local_ranks_refusal(8, false, two_cores), "");  // CUDA: one GPU per rank, not one core
}

TEST(LocalCapacity, RanksBeyondTheAvailableMemoryAreRefused) {
  const LocalCapacity big_but_full{64, int64_t{1} << 30};  // 1 GiB available: 4 ranks of 256 MiB
  EXPECT_EQ(local_ranks_refusal(4, true, big_but_full), "");
  const std::string why = local_ranks_refusal(16, true, big_but_full);
  EXPECT_NE(why.find("16 ranks need at least 4096 MiB, but only 1.0 GiB of memory is available"), std::string::npos)
      << why;
  EXPECT_NE(why.find("room for about 4 ranks"), std::string::npos) << why;
  EXPECT_EQ(local_ranks_refusal(16, true, {64, 0}), "");  // memory unknown: not refused for it
}

TEST(LocalCapacity, TheCheckNamesTheOverride) {
  const std::string msg = error_of<UsageError>([] { check_local_ranks_fit(100000, true); });
  EXPECT_NE(msg.find("--nproc 100000: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("--oversubscribe"), std::string::npos) << msg;
  EXPECT_NO_THROW(check_local_ranks_fit(1, true));
}

}  // namespace
}  // namespace tbd
