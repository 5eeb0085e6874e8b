// Activation checkpointing (--activation-checkpointing, nn/activation_checkpoint.h):
// the option's values, the refusal for workloads without transformer
// blocks, gradients equal to the unchecked model's with dropout on (so the
// random state must be restored for the recomputation), under autocast too,
// training still converging, and the flops probe counting the recomputation
// apart from the model FLOPs.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tbd/core/error.h"
#include "tbd/measure/probes/flops_probe.h"
#include "tbd/nn/activation_checkpoint.h"
#include "tbd/nn/gpt.h"
#include "tbd/nn/llama.h"
#include "tbd/nn/transformer.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::WorkloadUnderTest;
using Mode = ActivationCheckpointing::Mode;

ActivationCheckpointing mode(const std::string& text) { return parse_activation_checkpointing(text); }

TEST(ActivationCheckpointingOption, ParsesEachModeAndWritesItBack) {
  EXPECT_EQ(mode("none").mode, Mode::none);
  EXPECT_EQ(mode("full").mode, Mode::full);
  EXPECT_EQ(mode("selective").mode, Mode::selective);
  EXPECT_EQ(mode("selective").every, 2);  // torchtitan's layer-wise default
  EXPECT_EQ(mode("selective=3").every, 3);
  for (const char* text : {"none", "full", "selective=2", "selective=1", "selective=7"})
    EXPECT_EQ(to_string(mode(text)), text);
  EXPECT_EQ(to_string(mode("selective")), "selective=2");
}

TEST(ActivationCheckpointingOption, RejectsBadValuesNamingTheAcceptedOnes) {
  for (const char* bad : {"", "Full", "partial", "selective=", "selective=0", "selective=-1", "selective=x",
                          "selective=2.5", "selective=10001", "selective2", "full=2", "op"}) {
    const std::string e = error_of<UsageError>([&] { parse_activation_checkpointing(bad); });
    EXPECT_NE(e.find("--activation-checkpointing must be none, full, selective or selective=K"), std::string::npos)
        << bad << ": " << e;
    EXPECT_NE(e.find(std::string("got '") + bad + "'"), std::string::npos) << e;
  }
}

TEST(ActivationCheckpointingOption, SelectiveTakesEveryKthBlockCountingFromOne) {
  const auto chosen = [](const ActivationCheckpointing& c, int64_t blocks) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < blocks; ++i)
      if (c.checkpoints(i)) v.push_back(i);
    return v;
  };
  EXPECT_EQ(chosen(mode("none"), 4), (std::vector<int64_t>{}));
  EXPECT_EQ(chosen(mode("full"), 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(chosen(mode("selective"), 6), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(chosen(mode("selective=3"), 7), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(chosen(mode("selective=1"), 3), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ActivationCheckpointingOption, WorkloadsWithoutTransformerBlocksRefuseIt) {
  RunOptions o;
  o.activation_checkpointing = mode("full");
  for (const char* name : {"resnet50", "seq2seq", "dlrm", "a3c"}) {
    const std::string e =
        error_of<UsageError>([&] { check_activation_checkpointing_supported(create_workload(name)->info(), o); });
    EXPECT_NE(e.find(std::string(name) + " has no transformer blocks to re-run; it applies to transformer, gpt, llama"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("--activation-checkpointing full"), std::string::npos) << e;
  }
  for (const char* name : {"gpt", "llama", "transformer"})
    EXPECT_NO_THROW(check_activation_checkpointing_supported(create_workload(name)->info(), o));
  o.activation_checkpointing = mode("none");
  EXPECT_NO_THROW(check_activation_checkpointing_supported(create_workload("resnet50")->info(), o));
}

// The loss and every parameter's gradient after one forward and backward.
struct Gradients {
  double loss = 0;
  std::vector<torch::Tensor> grads;
};

// Largest |a - b| over all gradients, relative to the largest |a|.
double relative_difference(const Gradients& a, const Gradients& b) {
  double diff = 0, scale = 0;
  EXPECT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) {
    EXPECT_TRUE(a.grads[i].defined() && b.grads[i].defined()) << "parameter " << i << " has no gradient";
    diff = std::max(diff, (a.grads[i] - b.grads[i]).abs().max().item<double>());
    scale = std::max(scale, a.grads[i].abs().max().item<double>());
  }
  return diff / scale;
}

Gradients gradients_of(torch::nn::Module& model, const torch::Tensor& loss) {
  loss.backward();
  Gradients g;
  g.loss = loss.item<double>();
  for (const auto& p : model.parameters()) g.grads.push_back(p.grad().defined() ? p.grad().clone() : p.grad());
  return g;
}

// Tiny GPT, three blocks (selective=2 checkpoints the middle one), dropout
// 0.1; the same weights and ids for every mode; dropout drawn from `seed`.
// `autocast`: forward and loss under CPU bf16 autocast, as Phases runs them.
Gradients gpt_gradients(const std::string& checkpointing, uint64_t seed = 7, bool autocast = false) {
  torch::manual_seed(1);
  nn::GptConfig c;
  c.vocabulary = 64, c.context = 16, c.layers = 3, c.heads = 2, c.d_model = 16, c.dropout = 0.1;
  c.checkpointing = mode(checkpointing);
  nn::Gpt model(c);
  model->train();
  const auto ids = torch::randint(64, {2, 16}, torch::kInt64);
  const auto targets = torch::randint(64, {2, 16}, torch::kInt64);
  torch::manual_seed(seed);
  torch::Tensor loss;
  {
    if (autocast) {
      at::autocast::set_autocast_enabled(at::kCPU, true);
      at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    }
    const auto logits = model->forward(ids);
    loss = torch::nn::functional::cross_entropy(logits.reshape({-1, 64}).to(torch::kFloat), targets.reshape({-1}));
    if (autocast) {
      at::autocast::set_autocast_enabled(at::kCPU, false);
      at::autocast::clear_cache();
    }
  }
  return gradients_of(*model, loss);
}

// Tiny Transformer, two encoder and two decoder layers (selective=2
// checkpoints the second encoder and the second decoder layer), padded
// sources (the mask is a second input of each layer), dropout 0.1.
Gradients transformer_gradients(const std::string& checkpointing, uint64_t seed = 7) {
  torch::manual_seed(1);
  nn::TransformerConfig c;
  c.vocabulary = 40, c.d_model = 16, c.heads = 2, c.ffn = 32, c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0.1, c.max_length = 16, c.pad = 0;
  c.checkpointing = mode(checkpointing);
  nn::Transformer model(c);
  model->train();
  const auto source = torch::randint(1, 40, {3, 9}, torch::kInt64);
  const auto lengths = torch::tensor({9, 6, 4}, torch::kInt64);
  const auto target_input = torch::randint(1, 40, {3, 7}, torch::kInt64);
  const auto targets = torch::randint(1, 40, {3, 7}, torch::kInt64);
  torch::manual_seed(seed);
  const auto logits = model->forward(source, lengths, target_input);
  const auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, 40}), targets.reshape({-1}));
  return gradients_of(*model, loss);
}

// Tiny Llama, three blocks of grouped-query attention (4 query heads, 2
// key/value heads), untied; no dropout in Llama, so the seed changes the
// weights instead to show the comparison can fail.
Gradients llama_gradients(const std::string& checkpointing, uint64_t seed = 7) {
  torch::manual_seed(seed);
  nn::LlamaConfig c;
  c.vocabulary = 64, c.context = 16, c.layers = 3, c.d_model = 32, c.heads = 4, c.kv_heads = 2, c.head_dim = 8;
  c.ffn = 64;
  c.checkpointing = mode(checkpointing);
  nn::Llama model(c);
  model->train();
  torch::manual_seed(1);
  const auto ids = torch::randint(64, {2, 16}, torch::kInt64);
  const auto targets = torch::randint(64, {2, 16}, torch::kInt64);
  const auto logits = model->forward(ids);
  const auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, 64}), targets.reshape({-1}));
  return gradients_of(*model, loss);
}

// fp32 rounding: the recomputed graph sums a block input's gradient in
// another order than the unchecked graph may.
constexpr double kFp32 = 1e-5;

TEST(ActivationCheckpoint, GptGradientsEqualTheUncheckedModelsWithDropout) {
  const Gradients none = gpt_gradients("none");
  // The comparison can fail: other dropout masks give other gradients.
  EXPECT_GT(relative_difference(none, gpt_gradients("none", /*seed=*/8)), 1e-2);
  for (const char* m : {"full", "selective=2", "selective=3"}) {
    const Gradients checked = gpt_gradients(m);
    EXPECT_EQ(checked.loss, none.loss) << m;  // the first forward is the unchecked forward
    EXPECT_LT(relative_difference(none, checked), kFp32) << m;
  }
}

TEST(ActivationCheckpoint, TransformerGradientsEqualTheUncheckedModelsWithDropout) {
  const Gradients none = transformer_gradients("none");
  EXPECT_GT(relative_difference(none, transformer_gradients("none", /*seed=*/8)), 1e-2);
  for (const char* m : {"full", "selective=2"}) {
    const Gradients checked = transformer_gradients(m);
    EXPECT_EQ(checked.loss, none.loss) << m;
    EXPECT_LT(relative_difference(none, checked), kFp32) << m;
  }
}

TEST(ActivationCheckpoint, LlamaGradientsEqualTheUncheckedModels) {
  const Gradients none = llama_gradients("none");
  EXPECT_GT(relative_difference(none, llama_gradients("none", /*seed=*/8)), 1e-2);
  for (const char* m : {"full", "selective=2"}) {
    const Gradients checked = llama_gradients(m);
    EXPECT_EQ(checked.loss, none.loss) << m;
    EXPECT_LT(relative_difference(none, checked), kFp32) << m;
  }
}

TEST(ActivationCheckpoint, RecomputesUnderTheForwardsAutocast) {
  // Under bf16 autocast the gradients differ from fp32's by bf16 rounding;
  // a recomputation in fp32 (autocast is off in backward) would mix the two.
  const Gradients fp32 = gpt_gradients("none");
  const Gradients none = gpt_gradients("none", 7, /*autocast=*/true);
  const Gradients full = gpt_gradients("full", 7, /*autocast=*/true);
  const double bf16_rounding = relative_difference(fp32, none);
  EXPECT_GT(bf16_rounding, 1e-4);  // autocast did act
  EXPECT_EQ(full.loss, none.loss);
  EXPECT_LT(relative_difference(none, full), bf16_rounding / 10);
}

TEST(ActivationCheckpoint, TheRestOfTheRunDrawsAsIfNoBlockReran) {
  // After a checkpointed step the generator is where the unchecked step leaves it.
  gpt_gradients("none");
  const auto after_none = torch::rand({4});
  gpt_gradients("full");
  EXPECT_TRUE(torch::equal(torch::rand({4}), after_none));
}

TEST(ActivationCheckpoint, OnlyTheInputsOfACheckpointedBlockAreKept) {
  // Each op's saved tensors belong to the graph; a checkpointed block
  // leaves one node (the checkpoint) where the unchecked block leaves many.
  torch::manual_seed(1);
  nn::GptConfig c;
  c.vocabulary = 64, c.context = 16, c.layers = 1, c.heads = 2, c.d_model = 16;
  auto block = std::make_shared<nn::GptBlockImpl>(c);
  const auto x = torch::randn({2, 16, 16}, torch::requires_grad());
  const auto y =
      nn::checkpointed(*block, [block](const std::vector<torch::Tensor>& in) { return block->forward(in[0]); }, {x});
  ASSERT_TRUE(y.grad_fn());
  // Inputs: x and the block's 12 parameters; no edge leads to another op of the block.
  EXPECT_EQ(y.grad_fn()->next_edges().size(), 1u + block->parameters().size());
  for (const auto& e : y.grad_fn()->next_edges()) EXPECT_EQ(e.function->name(), "torch::autograd::AccumulateGrad");
}

// The workload under `checkpointing` (tiny, batch `batch`).
WorkloadUnderTest workload(const std::string& name, const std::string& checkpointing, int64_t batch,
                           std::map<std::string, std::string> settings = {}) {
  RunOptions o;
  o.workload = name;
  o.scale = Scale::tiny;
  o.batch_size = batch;
  o.settings = std::move(settings);
  o.data_workers = 1;
  o.activation_checkpointing = mode(checkpointing);
  return WorkloadUnderTest(o);
}

TEST(ActivationCheckpoint, WorkloadsTrainAlikeInEachMode) {
  // Three steps of gpt (dropout 0.1) and transformer: the same losses in
  // every mode (the modes reach the models through setup).
  for (const char* name : {"gpt", "llama", "transformer"}) {
    const int64_t batch = std::string(name) == "transformer" ? 256 : 4;
    std::vector<double> reference;
    for (const char* m : {"none", "full", "selective=2"}) {
      auto t = workload(name, m, batch);
      const auto losses = t.train_on_one_batch(3);
      if (reference.empty()) reference = losses;
      for (size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(losses[i], reference[i], 1e-4) << name << " " << m;
    }
  }
}

TEST(ActivationCheckpoint, LossFallsWithFullCheckpointing) {
  auto gpt = workload("gpt", "full", 8, {{"lr", "0.003"}});
  const auto g = gpt.train_on_one_batch(30);
  EXPECT_LT(g.back(), g.front() - 1.0) << g.front() << " -> " << g.back();
  auto transformer = workload("transformer", "full", 256, {{"warmup_steps", "10"}});
  const auto t = transformer.train_on_one_batch(40);
  EXPECT_LT(t.back(), 0.7 * t.front()) << t.front() << " -> " << t.back();
}

// FLOPs of one gpt step (tiny: batch 4, context 32, d 32, 2 heads, 2 blocks).
struct Counted {
  double hardware, model, recomputed;
};
Counted gpt_step_flops(const std::string& checkpointing) {
  auto t = workload("gpt", checkpointing, 4);
  const Batch b = t.workload->next_batch();
  FlopsProbe probe;
  probe.start();
  probe.set_counting(true);
  t.step(b);
  probe.stop();
  return {probe.total_flops(), probe.model_flops(), probe.recomputed_flops()};
}

TEST(ActivationCheckpoint, FlopsProbeCountsRecomputationApart) {
  // One block's forward: the qkv, output, fc and proj GEMMs 2·BT·d²·(3 + 1
  // + 4 + 4) plus attention 2·B·h·T·T·(2·d/h).
  const double bt = 4 * 32, d = 32;
  const double block_forward = 2 * bt * d * d * 12 + 2.0 * 4 * 2 * 32 * 32 * (2 * 16);
  const Counted none = gpt_step_flops("none");
  EXPECT_EQ(none.recomputed, 0);
  EXPECT_EQ(none.hardware, none.model);
  const Counted full = gpt_step_flops("full");
  EXPECT_DOUBLE_EQ(full.recomputed, 2 * block_forward);  // both blocks re-run
  EXPECT_GT(full.hardware, full.model);
  EXPECT_DOUBLE_EQ(full.model, none.model);  // the model's FLOPs do not change
  EXPECT_DOUBLE_EQ(full.hardware, none.hardware + 2 * block_forward);
  const Counted selective = gpt_step_flops("selective=2");
  EXPECT_DOUBLE_EQ(selective.recomputed, block_forward);  // the second block only
  EXPECT_DOUBLE_EQ(selective.model, none.model);
}

}  // namespace
}  // namespace tbd
