// The gradient reducer against a backend whose completion callbacks trail
// wait(), as c10d's do (a future's callbacks run after waiters are woken):
// a late callback must land in its own iteration's record, never in a
// later bucket's or in a bucket the reducer has since replaced.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "tbd/dist/gradient_reducer.h"
#include "tbd/dist/process_group.h"

namespace tbd {
namespace {

class Done final : public PendingReduce {
 public:
  void wait() override {}
};

// One rank that calls "gloo" itself (so sparse gradients go on their own);
// its all-reduces are complete at once, their callbacks held until fire().
class LateCallbackGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend_name() const override { return "gloo"; }
  void broadcast_from_rank0(std::vector<torch::Tensor>&) override {}
  std::shared_ptr<PendingReduce> allreduce_sum(torch::Tensor flat, std::function<void()> on_done) override {
    if (flat.is_sparse()) flat.copy_(flat.coalesce());  // the sum of one rank, coalesced as Gloo returns it
    if (on_done) held_.push_back(std::move(on_done));
    return std::make_shared<Done>();
  }
  int max_across_ranks(int value) override { return value; }
  std::vector<std::string> gather_text(const std::string&, const std::string& value) override { return {value}; }
  void barrier() override {}
  // Runs the `n` oldest callbacks held.
  void fire(size_t n) {
    for (size_t i = 0; i < n; ++i) held_[i]();
    held_.erase(held_.begin(), held_.begin() + static_cast<long>(n));
  }
  size_t held() const { return held_.size(); }

 private:
  std::vector<std::function<void()>> held_;
};

TEST(GradientReducer, LateCompletionCallbacksLandInTheirOwnIteration) {
  torch::manual_seed(0);
  auto table = torch::randn({50, 4}, torch::requires_grad());  // an embedding table: sparse gradients
  auto weight = torch::randn({4, 3}, torch::requires_grad());
  LateCallbackGroup group;
  GradientReducer reducer({table, weight}, group, 1 << 20, /*overlap=*/true);
  const auto backward = [&] {  // the weight's bucket launches from its hook
    table.mutable_grad() = torch::Tensor();
    weight.mutable_grad() = torch::Tensor();
    const auto rows = torch::embedding(table, torch::tensor({1, 7, 7}), -1, false, /*sparse=*/true);
    rows.matmul(weight).sum().backward();
  };
  // Iteration 1 learns that the table's gradient is sparse and rebuilds the
  // buckets without it: iteration 1's callback fires after that.
  backward();
  reducer.synchronize();
  group.fire(group.held());
  // Iteration 2's callback fires during iteration 3, after its bucket launched.
  backward();
  reducer.synchronize();
  EXPECT_TRUE(table.grad().is_sparse());  // on its own since the rebuild
  backward();
  ASSERT_EQ(group.held(), 2u);
  group.fire(1);  // iteration 2's
  reducer.synchronize();
  const auto history = reducer.take_history();
  ASSERT_EQ(history.size(), 3u);
  // Iteration 3's callback has not run: its bucket's end is the wait's end,
  // not the moment iteration 2's late callback ran.
  const auto& last = history.back();
  ASSERT_EQ(last.buckets.size(), 2u);  // the sparse all-reduce, then the weight's bucket
  EXPECT_TRUE(last.buckets.front().sparse);
  EXPECT_FALSE(last.buckets.back().sparse);
  EXPECT_DOUBLE_EQ(last.buckets.back().done_s, last.wait_end_s);
}

}  // namespace
}  // namespace tbd
