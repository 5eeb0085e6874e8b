#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#include "tbd/core/error.h"
#include "tbd/core/host_allocator.h"

namespace tbd {
namespace {

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// A step's worth of large buffers: activations kept alive together until
// the backward pass, then freed. With glibc's defaults the freed top of the
// heap exceeds its trim threshold and goes back to the kernel, so the next
// step faults it in again (8 MiB buffers: ~8,000 faults per step here).
void one_step(size_t bytes) {
  char* buffers[4];
  for (int i = 0; i < 4; ++i) {
    buffers[i] = static_cast<char*>(std::malloc(bytes));
    ASSERT_NE(buffers[i], nullptr);
    std::memset(buffers[i], i + 1, bytes);
  }
  for (int i = 3; i >= 0; --i) std::free(buffers[i]);
}

TEST(HostAllocator, RetainReusesFreedMemoryWithoutFaultingItInAgain) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "the retaining settings are glibc's";
#endif
  const auto state = apply_host_allocator(HostAllocator::retain);
  ASSERT_TRUE(state.applied) << state.detail;
  EXPECT_EQ(state.requested, "retain");
  constexpr size_t kBytes = 8u << 20;
  one_step(kBytes);  // the first step faults its memory in
  const long before = minor_faults();
  for (int s = 0; s < 4; ++s) one_step(kBytes);
  const long pages_per_step = (minor_faults() - before) / 4;
  // Retained, the steps reuse the same heap memory.
  EXPECT_LT(pages_per_step, 200) << "minor faults per step after the first";
}

TEST(HostAllocator, SystemAfterRetainInOneProcessSaysItIsNotApplied) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "the retaining settings are glibc's";
#endif
  ASSERT_TRUE(apply_host_allocator(HostAllocator::retain).applied);
  const auto state = apply_host_allocator(HostAllocator::system);
  EXPECT_FALSE(state.applied);
  EXPECT_NE(state.detail.find("glibc cannot undo"), std::string::npos) << state.detail;
}

TEST(HostAllocator, TheChoiceIsNamedAndChecked) {
  EXPECT_EQ(parse_host_allocator("retain"), HostAllocator::retain);
  EXPECT_EQ(parse_host_allocator("system"), HostAllocator::system);
  EXPECT_STREQ(to_string(HostAllocator::system), "system");
  try {
    parse_host_allocator("jemalloc");
    FAIL() << "accepted an unknown allocator";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("retain or system"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tbd
