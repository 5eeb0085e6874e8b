// within_deadline: c10d calls without a time-out of their own (TCPStore's
// handshake and check) are abandoned after a deadline instead of hanging.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "tbd/dist/deadline.h"

namespace tbd {
namespace {

using namespace std::chrono_literals;

TEST(Deadline, ReturnsTheResultOfAQuickCall) {
  EXPECT_EQ(within_deadline(1000ms, "adding", [] { return 2 + 3; }), 5);
}

TEST(Deadline, RethrowsTheCallsOwnError) {
  EXPECT_THROW(within_deadline(1000ms, "failing", []() -> int { throw Error("no peer"); }), Error);
}

TEST(Deadline, ABlockedCallIsAbandonedAtTheDeadline) {
  // The call blocks until released, as a recv() on a frozen peer's socket does.
  auto release = std::make_shared<std::atomic<bool>>(false);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    within_deadline(200ms, "the store's check", [release] {
      while (!release->load()) std::this_thread::sleep_for(5ms);
      return 0;
    });
    ADD_FAILURE() << "no DeadlineExceeded";
  } catch (const DeadlineExceeded& e) {
    EXPECT_STREQ(e.what(), "the store's check did not finish within 0.2 s");
  }
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 2000ms);
  release->store(true);  // lets the abandoned helper end before the test binary does
}

}  // namespace
}  // namespace tbd
