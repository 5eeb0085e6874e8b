// tbd predict --sharding's memory model on made-up bases: each strategy
// divides what ZeRO says it divides and leaves the rest of the peak alone;
// the fewest ranks that fit agree with trying every power of two; a base
// that lacks what the model needs is refused naming it.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tbd/core/error.h"
#include "tbd/predict/sharded_memory_model.h"

namespace tbd {
namespace {

constexpr double kMiB = 1 << 20;
// Buckets of 2 MiB: three of them (6 MiB) stay whole at the peak.
constexpr double kBucket = 2 * kMiB;

// A base whose peak falls in backward: 40 MiB of weights (10 Mi fp32
// elements in three parameters), 20 MiB of gradients alive at the peak, 80
// MiB of Adam state and 100 MiB of activations; two wrapping units of 3 Mi
// elements each (one parameter each), 4 Mi elements outside them.
nlohmann::json base() {
  return {{"memory",
           {{"peak_bytes", 240 * kMiB},
            {"breakdown",
             {{"weights", 40 * kMiB},
              {"weight_gradients", 20 * kMiB},
              {"optimizer_state", 80 * kMiB},
              {"feature_maps", 100 * kMiB}}}}},
          {"gradients",
           {{"elements", {4 * kMiB, 3 * kMiB, 3 * kMiB}},
            {"element_size", {4, 4, 4}},
            {"kind", {"Float@cpu", "Float@cpu", "Float@cpu"}}}},
          {"model",
           {{"trainable_parameters", 10 * kMiB},
            {"wrapping_units",
             {{"count", 2},
              {"largest_unit_elements", 3 * kMiB},
              {"root_elements", 4 * kMiB},
              {"parameter_units", {-1, 0, 1}},
              {"parameter_cast_by_autocast", {false, true, true}}}}}},
          {"throughput", {{"unit", "tokens/s"}}}};
}

double peak(const nlohmann::json& p) { return p["peak_bytes_per_rank"].get<double>() / kMiB; }
double state(const nlohmann::json& p, const char* part) {
  return p["model_state_bytes_per_rank"][part].get<double>() / kMiB;
}

TEST(ShardedMemoryModel, NoneIsTheBase) {
  const auto p = predict_sharded_memory(base(), 4, Sharding::none, 0, kBucket);
  EXPECT_DOUBLE_EQ(peak(p), 240);
  EXPECT_DOUBLE_EQ(state(p, "total"), 40 + 40 + 80);  // every gradient: 10 Mi elements × 4 bytes
  EXPECT_FALSE(p.contains("fits"));
}

TEST(ShardedMemoryModel, EachStageDividesWhatZeroSays) {
  const auto zero1 = predict_sharded_memory(base(), 4, Sharding::optimizer, 0, kBucket);
  EXPECT_DOUBLE_EQ(state(zero1, "optimizer_state"), 20);
  EXPECT_DOUBLE_EQ(state(zero1, "gradients"), 40);
  EXPECT_DOUBLE_EQ(peak(zero1), 240 - 60);
  const auto zero2 = predict_sharded_memory(base(), 4, Sharding::gradients, 0, kBucket);
  EXPECT_DOUBLE_EQ(state(zero2, "gradients"), 10);
  // Of the 20 MiB alive at the peak, three 2 MiB buckets stay whole, the rest shrink to a quarter.
  EXPECT_DOUBLE_EQ(peak(zero2), 240 - 60 - (20 - (6 + 14.0 / 4)));
  // Buckets of 25 MiB: all 20 MiB may still be on the wire, nothing shrinks (a peak early in backward).
  EXPECT_DOUBLE_EQ(peak(predict_sharded_memory(base(), 4, Sharding::gradients, 0, 25 * kMiB)), 240 - 60);
  const auto zero3 = predict_sharded_memory(base(), 4, Sharding::full, 0, kBucket);
  // The root's 16 MiB whole, the units' 24 MiB in quarters, two 12 MiB units gathered.
  EXPECT_DOUBLE_EQ(state(zero3, "weights"), 16 + 6);
  EXPECT_DOUBLE_EQ(zero3["gathered_bytes"].get<double>() / kMiB, 24);
  // Its units (12 MiB) are its buckets: 20 MiB fit in three, whole.
  EXPECT_DOUBLE_EQ(peak(zero3), 240 - 60 - 40 + 22 + 24);
  EXPECT_EQ(zero3["zero_stage"], 3);
  EXPECT_EQ(zero3["unit"], "tokens/s");
}

// A peak at the start of backward, before any gradient (llama's, gpt's: the
// loss's gradients over the vocabulary): ZeRO-3 has gathered no unit yet
// there; the forward's own peak, with two units gathered, competes.
TEST(ShardedMemoryModel, NoUnitIsGatheredAtABackwardPeakBeforeAnyGradient) {
  auto b = base();
  b["memory"]["breakdown"]["weight_gradients"] = 0;
  b["memory"]["breakdown"]["feature_maps"] = 120 * kMiB;
  b["memory"]["phase_peak_bytes"] = {{"forward", 200 * kMiB}, {"backward", 240 * kMiB}};
  // Weights 40 -> 22, Adam state 80 -> 20: 78 MiB less; no unit gathered.
  EXPECT_DOUBLE_EQ(peak(predict_sharded_memory(b, 4, Sharding::full, 0, kBucket)), 240 - 78);
  // A forward peak within 24 MiB (two 12 MiB units) of it decides instead.
  b["memory"]["phase_peak_bytes"]["forward"] = 230 * kMiB;
  EXPECT_DOUBLE_EQ(peak(predict_sharded_memory(b, 4, Sharding::full, 0, kBucket)), 230 - 78 + 24);
  // ZeRO-2 gathers nothing: its peak is the backward one either way.
  EXPECT_DOUBLE_EQ(peak(predict_sharded_memory(b, 4, Sharding::gradients, 0, kBucket)), 240 - 60);
}

// Under bf16, full gathers the units' linear weights in bf16 (half the
// bytes), and the copies autocast kept of them in the base (2 B each, alive
// until their backward) are not made.
TEST(ShardedMemoryModel, UnderBf16UnitsAreGatheredInBf16AndTheirAutocastCopiesGo) {
  auto b = base();
  b["workload"] = {{"options", {{"precision", "bf16"}, {"activation_checkpointing", "none"}}}};
  b["memory"]["breakdown"]["weight_gradients"] = 0;
  b["memory"]["phase_peak_bytes"] = {{"forward", 200 * kMiB}, {"backward", 240 * kMiB}};
  const auto p = predict_sharded_memory(b, 4, Sharding::full, 0, kBucket);
  EXPECT_DOUBLE_EQ(p["gathered_bytes"].get<double>() / kMiB, 12);  // two 3 Mi-element units in 2 B
  EXPECT_DOUBLE_EQ(p["autocast_copies_removed_bytes"].get<double>() / kMiB, 12);
  // The backward peak less the state (78 MiB) and the copies (12), the
  // forward's with two units gathered (+12) less the same: the larger.
  EXPECT_DOUBLE_EQ(peak(p), std::max(240 - 78 - 12, 200 - 78 + 12 - 12));
  // Checkpointed units keep no copies: nothing to take off.
  b["workload"]["options"]["activation_checkpointing"] = "full";
  EXPECT_DOUBLE_EQ(peak(predict_sharded_memory(b, 4, Sharding::full, 0, kBucket)), 240 - 78);
  // A bf16 base that does not say which parameters autocast casts is refused.
  b["model"]["wrapping_units"].erase("parameter_cast_by_autocast");
  EXPECT_THROW(predict_sharded_memory(b, 4, Sharding::full, 0, kBucket), Error);
}

TEST(ShardedMemoryModel, FewestRanksThatFitIsTheFirstPowerOfTwoThatDoes) {
  for (const Sharding s : {Sharding::optimizer, Sharding::gradients, Sharding::full}) {
    const long long device = static_cast<long long>(170 * kMiB);
    const auto p = predict_sharded_memory(base(), 2, s, device, kBucket);
    ASSERT_TRUE(p.contains("fewest_ranks_that_fit"));
    int expected = 0;
    for (int n = 1; n <= 65536 && expected == 0; n *= 2)
      if (peak(predict_sharded_memory(base(), n, s, 0, kBucket)) * kMiB <= static_cast<double>(device)) expected = n;
    if (expected == 0)
      EXPECT_TRUE(p["fewest_ranks_that_fit"].is_null()) << to_string(s);
    else
      EXPECT_EQ(p["fewest_ranks_that_fit"].get<int>(), expected) << to_string(s);
    EXPECT_EQ(p["fits"].get<bool>(), peak(p) * kMiB <= static_cast<double>(device));
  }
  // Activations alone (100 MiB) exceed a 90 MiB device at any number of ranks.
  const auto never = predict_sharded_memory(base(), 2, Sharding::full, static_cast<long long>(90 * kMiB), kBucket);
  EXPECT_TRUE(never["fewest_ranks_that_fit"].is_null());
  EXPECT_FALSE(never["fits"].get<bool>());
}

TEST(ShardedMemoryModel, RefusesABaseThatLacksWhatItNeeds) {
  auto no_memory = base();
  no_memory.erase("memory");
  EXPECT_THROW(predict_sharded_memory(no_memory, 2, Sharding::gradients, 0, kBucket), Error);
  auto no_units = base();
  no_units["model"].erase("wrapping_units");
  EXPECT_NO_THROW(predict_sharded_memory(no_units, 2, Sharding::gradients, 0, kBucket));
  try {
    predict_sharded_memory(no_units, 2, Sharding::full, 0, kBucket);
    FAIL() << "a base without wrapping units predicted --sharding full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrapping units"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tbd
