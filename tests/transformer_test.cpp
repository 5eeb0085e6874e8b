#include <gtest/gtest.h>

#include <cmath>

#include "tbd/nn/transformer.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::WorkloadUnderTest;

// Closed form, from the layer shapes: one V×d embedding shared by encoder,
// decoder and output projection (tied); an attention block has four d×d
// projections with biases, 4(d² + d); the FFN d→f→d has 2df + f + d; each
// LayerNorm 2d. Encoder layer: attention + FFN + 2 norms; decoder layer:
// self- and cross-attention + FFN + 3 norms. Sinusoidal positions are not
// parameters. (Cross-checked against PyTorch's nn.Transformer(512, 8, 6, 6,
// 2048) minus its two final LayerNorms, plus the 32000×512 embedding.)
int64_t transformer_parameters(int64_t v, int64_t d, int64_t f, int64_t enc, int64_t dec) {
  const int64_t attention = 4 * (d * d + d), ffn = 2 * d * f + f + d, norm = 2 * d;
  return v * d + enc * (attention + ffn + 2 * norm) + dec * (2 * attention + ffn + 3 * norm);
}

TEST(Transformer, FullScaleCountMatchesTheClosedForm) {
  EXPECT_EQ(transformer_parameters(32000, 512, 2048, 6, 6), 60'522'496);
  const auto w = create_workload("transformer");
  EXPECT_EQ(w->full_scale_parameters(Settings(w->info().settings, {}, "transformer")), 60'522'496);
}

TEST(Transformer, SmallScaleSetsUpWithItsClosedFormCount) {
  WorkloadUnderTest t("transformer", Scale::small, {}, 256);
  EXPECT_EQ(t.workload->state().parameter_count(), transformer_parameters(32000, 256, 1024, 3, 3));
}

TEST(Transformer, BatchesByTokenCountAndCountsRealTargetTokens) {
  WorkloadUnderTest t("transformer", Scale::tiny, {}, 256);
  EXPECT_EQ(t.workload->state().parameter_count(), transformer_parameters(200, 32, 64, 2, 2));
  int64_t sentences = 0;
  for (int i = 0; i < 6; ++i) {
    const Batch b = t.workload->next_batch();
    sentences += b.inputs[0].size(0);
    EXPECT_EQ(b.samples, b.targets[0].ne(3).sum().item<int64_t>());  // <pad> is id 3
    if (b.inputs[0].size(0) > 1) {                                   // a sentence longer than the budget comes alone
      EXPECT_LE(b.inputs[0].numel(), 256);
      EXPECT_LE(b.targets[0].numel(), 256);
    }
    // Sources end with </s> (id 2) at their length.
    EXPECT_TRUE(b.inputs[0].gather(1, b.inputs[1].unsqueeze(1) - 1).eq(2).all().item<bool>());
  }
  EXPECT_GT(sentences, 6);
}

TEST(Transformer, TinyStepLossAndWarmUpLearningRate) {
  WorkloadUnderTest t("transformer", Scale::tiny, {}, 256);
  const double loss = t.step(t.workload->next_batch());
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(200.0), 1.0);
  // Step 1 of 4000 warm-up steps: d^-½ · 1 · 4000^-1.5.
  EXPECT_NEAR(t.workload->configuration()["learning_rate_last"].get<double>(),
              std::pow(32.0, -0.5) * std::pow(4000.0, -1.5), 1e-12);
}

TEST(Transformer, LossFallsOnOneFixedBatch) {
  WorkloadUnderTest t("transformer", Scale::tiny, {{"warmup_steps", "10"}}, 256);
  const auto losses = t.train_on_one_batch(40);
  EXPECT_LT(losses.back(), 0.7 * losses.front()) << losses.front() << " -> " << losses.back();
}

TEST(Transformer, PaddingAndCausalMasks) {
  nn::TransformerConfig c;
  c.vocabulary = 30, c.d_model = 16, c.heads = 2, c.ffn = 32, c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0.0, c.max_length = 16, c.pad = 3;
  nn::Transformer model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto alone = model->forward(torch::tensor({{5, 6, 2}}, torch::kInt64), torch::tensor({3}, torch::kInt64),
                                    torch::tensor({{1, 8, 9}}, torch::kInt64));
  const auto batched =
      model->forward(torch::tensor({{5, 6, 2, 3, 3}, {7, 7, 7, 7, 2}}, torch::kInt64),
                     torch::tensor({3, 5}, torch::kInt64), torch::tensor({{1, 8, 9, 3}, {1, 4, 4, 4}}, torch::kInt64));
  EXPECT_TRUE(torch::allclose(alone[0], batched[0].narrow(0, 0, 3), 1e-4, 1e-5));  // padding is invisible
  const auto future = model->forward(torch::tensor({{5, 6, 2}}, torch::kInt64), torch::tensor({3}, torch::kInt64),
                                     torch::tensor({{1, 8, 10}}, torch::kInt64));
  EXPECT_TRUE(torch::allclose(alone.narrow(1, 0, 2), future.narrow(1, 0, 2), 1e-4, 1e-5));  // causal
  EXPECT_FALSE(torch::allclose(alone.narrow(1, 2, 1), future.narrow(1, 2, 1), 1e-4, 1e-5));
}

TEST(Attention, PackedSelfAttentionEqualsSeparateProjections) {
  // The packed qkv matrix is the three d×d matrices stacked: with the same
  // weights, self-attention gives what separate q, k, v give.
  torch::manual_seed(3);
  nn::MultiHeadAttention packed(16, 4, 0.0, nn::AttentionKind::self);
  nn::MultiHeadAttention separate(16, 4, 0.0, nn::AttentionKind::cross);
  EXPECT_EQ(packed->parameters().size(), 4u);
  int64_t packed_count = 0, separate_count = 0;
  for (const auto& p : packed->parameters()) packed_count += p.numel();
  for (const auto& p : separate->parameters()) separate_count += p.numel();
  EXPECT_EQ(packed_count, separate_count);
  {
    torch::NoGradGuard no_grad;
    const auto w = packed->input_projection_weights();
    const auto b = packed->qkv->bias.chunk(3);
    for (auto [lin, i] : {std::pair{separate->q, 0}, {separate->k, 1}, {separate->v, 2}}) {
      lin->weight.copy_(w[i]);
      lin->bias.copy_(b[i]);
    }
    separate->out->weight.copy_(packed->out->weight);
    separate->out->bias.copy_(packed->out->bias);
  }
  const auto x = torch::randn({2, 5, 16});
  const auto mask = torch::tensor({true, true, true, false, false}).view({1, 1, 1, 5});
  EXPECT_TRUE(torch::allclose(packed(x, x, mask), separate(x, x, mask), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(packed(x, x, std::nullopt, true), separate(x, x, std::nullopt, true), 1e-5, 1e-6));
  // Packed projections attend within one sequence only.
  EXPECT_THROW(packed(x, torch::randn({2, 3, 16})), std::invalid_argument);
}

}  // namespace
}  // namespace tbd
