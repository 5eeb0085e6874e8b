// The threaded prefetching pipeline every real-data reader uses. Worker
// threads produce items by index (item i is always produce(i), whatever thread
// makes it, so a seeded pipeline is repeatable); next() hands them out in
// order and rethrows a worker's exception at the index where it happened.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tbd {

template <class T>
class Prefetcher {
 public:
  using Produce = std::function<T(int64_t index)>;

  // `depth`: how many items may be produced ahead of the consumer.
  Prefetcher(Produce produce, int workers, int depth) : produce_(std::move(produce)), depth_(depth < 1 ? 1 : depth) {
    for (int i = 0; i < (workers < 1 ? 1 : workers); ++i) threads_.emplace_back([this] { work(); });
  }

  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  ~Prefetcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_workers_.notify_all();
    for (auto& t : threads_) t.join();
  }

  T next() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return done_.count(consumed_) > 0; });
    auto node = done_.extract(consumed_);
    ++consumed_;
    lock.unlock();
    wake_workers_.notify_all();
    auto& [value, error] = node.mapped();
    if (error) std::rethrow_exception(error);
    return std::move(value);
  }

 private:
  void work() {
    for (;;) {
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_workers_.wait(lock, [this] { return stop_ || claimed_ < consumed_ + depth_; });
        if (stop_) return;
        index = claimed_++;
      }
      std::pair<T, std::exception_ptr> item{};
      try {
        item.first = produce_(index);
      } catch (...) {
        item.second = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.emplace(index, std::move(item));
      }
      ready_.notify_all();
    }
  }

  Produce produce_;
  const int64_t depth_;
  std::mutex mutex_;
  std::condition_variable ready_, wake_workers_;
  std::map<int64_t, std::pair<T, std::exception_ptr>> done_;
  int64_t claimed_ = 0, consumed_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tbd
