#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "tbd/data/epoch_shuffle.h"
#include "tbd/data/prefetcher.h"

namespace tbd {
namespace {

TEST(Prefetcher, DeliversInOrderWhateverTheWorkerTiming) {
  Prefetcher<int64_t> p(
      [](int64_t i) {
        // Later items finish first: order must still hold.
        std::this_thread::sleep_for(std::chrono::microseconds(200 * ((7 - i % 7))));
        return i * i;
      },
      4, 8);
  for (int64_t i = 0; i < 40; ++i) ASSERT_EQ(p.next(), i * i);
}

TEST(Prefetcher, NeverRunsFurtherAheadThanItsDepth) {
  std::atomic<int64_t> highest{-1};
  Prefetcher<int64_t> p(
      [&](int64_t i) {
        int64_t h = highest.load();
        while (i > h && !highest.compare_exchange_weak(h, i)) {
        }
        return i;
      },
      3, 4);
  p.next();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(highest.load(), 4);  // consumed 1, depth 4: items 0..4 at most
}

TEST(Prefetcher, RethrowsAWorkerErrorAtItsIndex) {
  Prefetcher<int64_t> p(
      [](int64_t i) -> int64_t {
        if (i == 3) throw std::runtime_error("bad item 3");
        return i;
      },
      2, 4);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(p.next(), i);
  try {
    p.next();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bad item 3");
  }
}

TEST(EpochShuffle, EachEpochIsAPermutationAndEpochsDiffer) {
  EpochShuffle s(50, 9);
  std::vector<int64_t> e0, e1;
  for (int64_t k = 0; k < 50; ++k) e0.push_back(s.item(k));
  for (int64_t k = 50; k < 100; ++k) e1.push_back(s.item(k));
  EXPECT_EQ(std::set<int64_t>(e0.begin(), e0.end()).size(), 50u);
  EXPECT_EQ(std::set<int64_t>(e1.begin(), e1.end()).size(), 50u);
  EXPECT_NE(e0, e1);
  EpochShuffle again(50, 9);
  EXPECT_EQ(again.item(77), s.item(77));  // same seed, same order, in any access order
}

TEST(EpochShuffle, IsSafeAcrossThreadsAndEvictions) {
  EpochShuffle s(7, 1);
  std::vector<std::thread> threads;
  std::atomic<bool> ok{true};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t k = t; k < 2000; k += 3)
        if (s.item(k) < 0 || s.item(k) >= 7) ok = false;
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace tbd
