// `tbd plan llama`'s shape model against the memory probe: the activations
// one micro-batch holds at the end of its forward, and the step's peak, as
// the probe measures them on this CPU, for fp32 and bf16 autocast, with and
// without activation checkpointing and gradient accumulation.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "tbd/core/options.h"
#include "tbd/core/settings.h"
#include "tbd/nn/llama.h"
#include "tbd/nn/llama_memory.h"
#include "tbd/workloads/registry.h"
#include "test_util.h"

namespace tbd {
namespace {

struct Measured {
  double activations = 0;  // feature maps at the end of the first forward
  double peak = 0;         // the step's peak, less the batch's ids and the probe's "other"
};

RunOptions llama_run(Scale scale, int64_t batch) {
  RunOptions o;
  o.workload = "llama";
  o.scale = scale;
  o.batch_size = batch;
  o.iters = 1;
  o.warmup = 1;
  o.repeat = 1;
  o.quiet = true;
  return o;
}

Measured measure(const RunOptions& o) {
  const auto memory = testing::run_registered(o, {"memory"}).result.at("memory");
  const auto& timeline = memory.at("timeline");
  Measured m;
  for (size_t i = 0; i < timeline.at("event").size(); ++i)
    if (timeline["event"][i] == "forward_end") {
      m.activations = timeline["bytes"]["feature_maps"][i].get<double>();
      break;
    }
  const auto& b = memory.at("breakdown");
  m.peak = memory.at("peak_bytes").get<double>() - b.at("inputs").get<double>() - b.at("other").get<double>();
  return m;
}

MemoryPlan plan_of(const RunOptions& o) {
  const auto workload = create_workload("llama");
  return *workload->memory_plan(o, Settings(workload->info().settings, o.settings, "llama"));
}

void expect_within(double planned, double measured, double tolerance, const std::string& what) {
  EXPECT_NEAR(planned / measured, 1.0, tolerance)
      << what << ": planned " << planned << " B, measured " << measured << " B";
}

TEST(LlamaMemoryPlan, MatchesTheMemoryProbeAtSmallScale) {
  struct Case {
    std::string name;
    std::string checkpointing;
    Precision precision;
  };
  for (const Case& c :
       {Case{"fp32", "none", Precision::fp32}, Case{"fp32 full", "full", Precision::fp32},
        Case{"fp32 selective=2", "selective=2", Precision::fp32}, Case{"bf16 autocast", "none", Precision::bf16},
        // A checkpointed block keeps no autocast weight copies.
        Case{"bf16 selective=2", "selective=2", Precision::bf16}}) {
    RunOptions o = llama_run(Scale::small, 1);
    o.activation_checkpointing = parse_activation_checkpointing(c.checkpointing);
    o.precision = c.precision;
    const MemoryPlan plan = plan_of(o);
    const Measured m = measure(o);
    expect_within(plan.activation_bytes(), m.activations, 0.01, c.name + " activations");
    expect_within(plan.peak_bytes, m.peak, 0.01, c.name + " peak");
  }
}

TEST(LlamaMemoryPlan, CheckpointingShrinksTheActivationsAsMeasuredAtTinyScale) {
  RunOptions none = llama_run(Scale::tiny, 8), full = none;
  full.activation_checkpointing = parse_activation_checkpointing("full");
  const Measured m_none = measure(none), m_full = measure(full);
  expect_within(plan_of(none).activation_bytes(), m_none.activations, 0.01, "none");
  expect_within(plan_of(full).activation_bytes(), m_full.activations, 0.01, "full");
  EXPECT_LT(plan_of(full).activation_bytes(), plan_of(none).activation_bytes());
}

TEST(LlamaMemoryPlan, AccumulationKeepsTheGradientsAtThePeak) {
  RunOptions o = llama_run(Scale::tiny, 8);
  o.grad_accum = 2;
  const Measured m = measure(o);
  const MemoryPlan plan = plan_of(o);
  expect_within(plan.peak_bytes, m.peak, 0.01, "grad-accum 2 peak");
  EXPECT_GT(plan.peak_bytes, plan_of(llama_run(Scale::tiny, 8)).peak_bytes);
}

// 8B in bf16 on a GPU, every block checkpointed, one 8,192-token sequence.
RunOptions eight_billion_on_a_gpu() {
  RunOptions o;
  o.workload = "llama";
  o.batch_size = 1;
  o.precision = Precision::bf16;
  o.device = "cuda";
  o.activation_checkpointing = parse_activation_checkpointing("full");
  o.settings = {{"size", "8b"}};
  return o;
}

TEST(LlamaMemoryPlan, EightBillionDoesNotFitOneEightyGigabyteGpuWithoutSharding) {
  RunOptions o = eight_billion_on_a_gpu();
  const MemoryPlan plan = plan_of(o);
  const double n = static_cast<double>(nn::llama_parameter_count(nn::llama_published_config("8b")));
  EXPECT_NEAR(plan.model_state_bytes() / 1e9, 128.5, 0.1);  // 16 B x 8.03 B parameters
  EXPECT_GT(plan.peak_bytes, 80e9);                         // even with every block checkpointed
  EXPECT_GT(plan.peak_bytes, 16 * n);
  o.settings = {{"size", "1b"}};
  EXPECT_LT(plan_of(o).peak_bytes, 80e9);  // 1B fits at one 8,192-token sequence
}

// One rank's plan of 8B on 64 ranks against ZeRO's formulas, written here
// from REFERENCE.md's shapes (root: embedding V·d, untied output V·d, final
// norm d; the rest in the 32 blocks) rather than from the plan's code.
TEST(LlamaMemoryPlan, ShardedModelStateFollowsZerosFormulas) {
  RunOptions o = eight_billion_on_a_gpu();
  o.world_size = 64;
  const double psi = 8030261248.0, root = 2.0 * 128256 * 4096 + 4096, n = 64;
  const auto state = [&](Sharding s) {
    o.sharding = s;
    const MemoryPlan plan = plan_of(o);
    std::map<std::string, double> bytes;
    for (const auto& t : plan.model_state) bytes[t.name] = t.bytes;
    return std::pair{bytes, plan.peak_bytes};
  };
  const auto [none, none_peak] = state(Sharding::none);
  const auto [stage1, stage1_peak] = state(Sharding::optimizer);
  const auto [stage2, stage2_peak] = state(Sharding::gradients);
  const auto [stage3, stage3_peak] = state(Sharding::full);
  EXPECT_DOUBLE_EQ(none.at("weights") + none.at("gradients") + none.at("optimizer_state"), 16 * psi);
  EXPECT_DOUBLE_EQ(stage1.at("weights") + stage1.at("gradients"), 8 * psi);
  EXPECT_DOUBLE_EQ(stage1.at("optimizer_state"), 8 * psi / n);
  EXPECT_DOUBLE_EQ(stage2.at("weights"), 4 * psi);
  EXPECT_DOUBLE_EQ(stage2.at("gradients") + stage2.at("optimizer_state"), 12 * psi / n);
  EXPECT_NEAR(stage3.at("weights"), 4 * root + 4 * (psi - root) / n, 1.0);
  EXPECT_DOUBLE_EQ(stage3.at("gradients") + stage3.at("optimizer_state"), 12 * psi / n);
  EXPECT_GT(none_peak, stage1_peak);
  EXPECT_GT(stage1_peak, stage2_peak);
  EXPECT_GT(stage2_peak, stage3_peak);
  EXPECT_GT(none_peak, 80e9);    // 8B does not fit an 80 GB device replicated ...
  EXPECT_LT(stage3_peak, 80e9);  // ... and does with ZeRO-3 over 64 ranks
}

// With gradient accumulation the earlier micro-batches' gradients are kept
// whole (sharding reduces only the last micro-batch's), so ZeRO-2 saves
// nothing on them at the start of the last backward.
TEST(LlamaMemoryPlan, AccumulatedGradientsStayWholeWhenSharded) {
  RunOptions o = llama_run(Scale::small, 2);
  o.world_size = 4;
  o.sharding = Sharding::gradients;
  const double one = plan_of(o).peak_bytes;
  o.grad_accum = 2;
  const MemoryPlan accumulated = plan_of(o);
  const double psi = static_cast<double>(accumulated.parameters);
  EXPECT_DOUBLE_EQ(accumulated.peak_bytes - one, 4 * psi);
}

// When the peak falls late in backward, the resident model state and the
// transients listed for that moment are the whole peak (nothing counted
// twice: a sharded rank's slices in the model state, the whole buckets
// beyond them as transients).
TEST(LlamaMemoryPlan, TermsOfALatePeakAddUpToIt) {
  for (const Sharding s : {Sharding::none, Sharding::gradients, Sharding::full}) {
    RunOptions o = llama_run(Scale::tiny, 1);  // one 32-token sequence: the gradients outweigh the activations
    o.world_size = 2;
    o.sharding = s;
    const MemoryPlan plan = plan_of(o);
    ASSERT_TRUE(plan.peak_moment.starts_with("late")) << plan.peak_moment;
    double transients = 0;
    for (const auto& t : plan.transients) transients += t.bytes;
    EXPECT_NEAR(plan.model_state_bytes() + transients, plan.peak_bytes, 1.0) << to_string(s);
  }
}

TEST(LlamaMemoryPlan, OtherWorkloadsHaveNoShapeModel) {
  const auto w = create_workload("resnet50");
  RunOptions o;
  o.workload = "resnet50";
  o.batch_size = 4;
  EXPECT_FALSE(w->memory_plan(o, Settings(w->info().settings, {}, "resnet50")).has_value());
}

}  // namespace
}  // namespace tbd
