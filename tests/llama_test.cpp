#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "tbd/core/error.h"
#include "tbd/core/parameter_set.h"
#include "tbd/nn/llama.h"
#include "tbd/nn/model_flops.h"
#include "tbd/optim/warmup_cosine.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::WorkloadUnderTest;

nn::LlamaConfig tiny_config(int64_t kv_heads, bool tied) {
  nn::LlamaConfig c;
  c.vocabulary = 512, c.context = 32, c.layers = 2, c.d_model = 64, c.heads = 4, c.kv_heads = kv_heads;
  c.head_dim = 16, c.ffn = 192, c.tied = tied;
  return c;
}

Settings llama_settings(std::map<std::string, std::string> given) {
  const auto w = create_workload("llama");
  return Settings(w->info().settings, given, "llama");
}

TEST(Llama, PublishedSizesHaveTheExactCounts) {
  EXPECT_EQ(nn::llama_parameter_count(nn::llama_published_config("1b")), 1'235'814'400);
  EXPECT_EQ(nn::llama_parameter_count(nn::llama_published_config("3b")), 3'212'749'824);
  EXPECT_EQ(nn::llama_parameter_count(nn::llama_published_config("8b")), 8'030'261'248);
  EXPECT_EQ(nn::llama_parameter_count(nn::llama_published_config("70b")), 70'553'706'496);
  // What `tbd list` prints: the default size is 8b.
  const auto w = create_workload("llama");
  EXPECT_EQ(w->full_scale_parameters(llama_settings({})), 8'030'261'248);
  EXPECT_EQ(w->full_scale_parameters(llama_settings({{"size", "70b"}})), 70'553'706'496);
  EXPECT_EQ(w->full_scale_parameters(llama_settings({{"size", "1b"}})), 1'235'814'400);
  EXPECT_THROW(llama_settings({{"size", "13b"}}), UsageError);
}

TEST(Llama, FeedForwardWidthsFollowMetasRule) {
  EXPECT_EQ(nn::llama_ffn_width(4096, 1.3, 1024), 14336);  // 8B
  EXPECT_EQ(nn::llama_ffn_width(8192, 1.3, 4096), 28672);  // 70B
  EXPECT_EQ(nn::llama_ffn_width(2048, 1.5, 256), 8192);    // 1B
  EXPECT_EQ(nn::llama_ffn_width(3072, 1.0, 256), 8192);    // 3B
  EXPECT_EQ(nn::llama_published_config("8b").ffn, 14336);
  EXPECT_EQ(nn::llama_published_config("70b").ffn, 28672);
}

// The analytic count must be the allocated model's, tied and untied, with
// and without grouped-query attention, at tiny and small shapes.
TEST(Llama, AnalyticCountEqualsTheAllocatedModel) {
  for (bool tied : {false, true})
    for (int64_t kv : {2, 4}) {
      const auto c = tiny_config(kv, tied);
      EXPECT_EQ(count_parameters(*nn::Llama(c)), nn::llama_parameter_count(c)) << "tied " << tied << " kv " << kv;
    }
  for (const char* size : {"8b", "1b"}) {  // small: untied (8b) and tied (1b)
    WorkloadUnderTest t("llama", Scale::small, {{"size", size}}, 1);
    const auto c = t.workload->configuration();
    nn::LlamaConfig small = tiny_config(2, std::string(size) == "1b");
    small.vocabulary = 8192, small.context = 512, small.layers = 4, small.d_model = 256, small.heads = 8,
    small.head_dim = 32, small.ffn = 768;
    EXPECT_EQ(c["tied_output"].get<bool>(), small.tied);
    EXPECT_EQ(c["ffn"].get<int64_t>(), 768);
    EXPECT_EQ(t.workload->state().parameter_count(), nn::llama_parameter_count(small)) << size;
  }
}

TEST(Llama, TinyKeepsGroupedQueryAttentionAndStepsNearLogVocabulary) {
  WorkloadUnderTest t("llama", Scale::tiny, {}, 4);
  const auto c = t.workload->configuration();
  EXPECT_LT(c["kv_heads"].get<int64_t>(), c["heads"].get<int64_t>());
  EXPECT_EQ(t.workload->state().parameter_count(), nn::llama_parameter_count(tiny_config(2, false)));
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.samples, 4 * 32);
  EXPECT_TRUE(torch::equal(b.inputs[0].narrow(1, 1, 31), b.targets[0].narrow(1, 0, 31)));
  const double loss = t.step(b);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(512.0), 0.5);  // N(0, 0.02) weights: nearly uniform predictions
}

TEST(Llama, LossFallsOnOneFixedBatch) {
  for (const char* size : {"8b", "1b"}) {  // untied and tied
    WorkloadUnderTest t("llama", Scale::tiny, {{"size", size}, {"lr", "0.003"}, {"warmup_steps", "3"}}, 8);
    const auto losses = t.train_on_one_batch(30);
    const double first = losses.front();
    const double last5 = std::accumulate(losses.end() - 5, losses.end(), 0.0) / 5;
    EXPECT_LT(last5, first - 1.0) << size << ": " << first << " -> " << last5;
  }
}

TEST(Llama, WarmupRisesLinearlyThenCosineEndsAtTheMinimum) {
  const WarmupCosine s{1.0, 10, 20, 0.1};
  for (int64_t k = 1; k <= 10; ++k) EXPECT_DOUBLE_EQ(s.at(k), 0.1 * static_cast<double>(k));
  EXPECT_NEAR(s.at(20), 0.1 + 0.9 * 0.5, 1e-12);  // half-way through the decay: the mean of peak and minimum
  for (int64_t k = 11; k <= 30; ++k) EXPECT_LT(s.at(k), s.at(k - 1)) << k;
  EXPECT_DOUBLE_EQ(s.at(30), 0.1);
  EXPECT_DOUBLE_EQ(s.at(1000), 0.1);  // held after the decay
  const WarmupCosine no_warmup{2.0, 0, 4, 0.0};
  EXPECT_NEAR(no_warmup.at(1), 2.0 * 0.5 * (1 + std::cos(M_PI / 4)), 1e-12);
}

TEST(Llama, WorkloadSetsTheScheduledRateEveryStep) {
  WorkloadUnderTest t("llama", Scale::tiny, {{"lr", "0.01"}, {"warmup_steps", "4"}, {"decay_steps", "4"}}, 2);
  const Batch b = t.workload->next_batch();
  for (int i = 0; i < 3; ++i) t.step(b);
  auto c = t.workload->configuration();
  EXPECT_EQ(c["learning_rate"]["steps"].get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(c["learning_rate"]["last"].get<double>(), 0.01 * 3 / 4);
  // An accumulated step (--grad-accum 3) is one optimizer step: one rate.
  t.step(std::vector<Batch>{b, b, b});
  EXPECT_EQ(t.workload->configuration()["learning_rate"]["steps"].get<int64_t>(), 4);
}

TEST(Llama, RopeScalingStretchesOnlyLowFrequencies) {
  auto c = tiny_config(2, false);  // head_dim 16: wavelengths 6 to ~6e5 positions
  c.rope_scaling.enabled = false;
  const auto plain = nn::llama_inverse_frequencies(c);
  c.rope_scaling.enabled = true;
  const auto scaled = nn::llama_inverse_frequencies(c);
  int kept = 0, stretched = 0, blended = 0;
  for (int64_t i = 0; i < 8; ++i) {
    const double p = plain[i].item<double>(), s = scaled[i].item<double>();
    const double wavelength = 2 * M_PI / p;
    if (wavelength < 8192 / 4.0) {
      EXPECT_DOUBLE_EQ(s, p);
      ++kept;
    } else if (wavelength > 8192 / 1.0) {
      EXPECT_DOUBLE_EQ(s, p / 8.0);
      ++stretched;
    } else {
      EXPECT_LT(s, p);
      EXPECT_GT(s, p / 8.0);
      ++blended;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(stretched, 0);
  EXPECT_GT(blended, 0);
  // The tables: cos and sin of position × frequency, each frequency twice.
  const auto tables = nn::llama_rope_tables(c);
  EXPECT_EQ(tables.cos.sizes(), (std::vector<int64_t>{32, 16}));
  EXPECT_NEAR(tables.cos[5][3].item<double>(), std::cos(5 * scaled[3].item<double>()), 1e-6);
  EXPECT_NEAR(tables.sin[5][11].item<double>(), std::sin(5 * scaled[3].item<double>()), 1e-6);
}

TEST(Llama, AttentionIsCausal) {
  nn::Llama model(tiny_config(2, false));
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(512, {1, 16}, torch::kInt64);
  auto changed = ids.clone();
  changed[0][10] = (ids[0][10].item<int64_t>() + 1) % 512;
  const auto a = model->forward(ids), b = model->forward(changed);
  EXPECT_TRUE(torch::allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10)));  // the past ignores the future
  EXPECT_FALSE(torch::allclose(a.narrow(1, 10, 1), b.narrow(1, 10, 1)));
}

// Grouped-query attention is multi-head attention whose key and value heads
// repeat within each group: query head h reads key/value head h / (H / KV).
TEST(Llama, GroupedQueryAttentionEqualsMultiHeadWithRepeatedKeysAndValues) {
  nn::Llama gqa(tiny_config(2, false)), mha(tiny_config(4, false));
  torch::NoGradGuard no_grad;
  auto target = mha->named_parameters();
  for (const auto& p : gqa->named_parameters()) {
    auto w = p.value();
    if (p.key().find("k_proj") != std::string::npos || p.key().find("v_proj") != std::string::npos)
      w = w.view({2, 16, 64}).repeat_interleave(2, 0).reshape({64, 64});
    target[p.key()].copy_(w);
  }
  const auto ids = torch::randint(512, {2, 20}, torch::kInt64);
  EXPECT_TRUE(torch::allclose(gqa->forward(ids), mha->forward(ids), 1e-5, 1e-6));
}

TEST(Llama, OnlyNormWeightsEscapeWeightDecay) {
  const auto c = tiny_config(2, false);
  int64_t vectors = 0;
  for (const auto& p : nn::Llama(c)->parameters())
    if (p.dim() < 2) vectors += p.numel();
  EXPECT_EQ(vectors, (2 * c.layers + 1) * c.d_model);  // two RMSNorms per block and the final one
}

TEST(Llama, ModelFlopsArePalmsWithoutTheUntiedEmbedding) {
  // 8B: N = 8,030,261,248 − 128,256·4096 (the input table, a lookup) = 7,504,924,672;
  // 6N = 45,029,548,032; 12·32·32·128·8192 = 12,884,901,888.
  EXPECT_EQ(nn::palm_flops_per_token(7'504'924'672, 32, 32, 128, 8192), 57'914'449'920);
  for (const char* size : {"8b", "1b"}) {
    WorkloadUnderTest t("llama", Scale::tiny, {{"size", size}}, 4);
    const auto m = t.workload->configuration()["model_flops"];
    const auto c = tiny_config(2, std::string(size) == "1b");
    const int64_t n = nn::llama_parameter_count(c) - (c.tied ? 0 : 512 * 64);
    EXPECT_EQ(m["N_parameters_in_matmuls"].get<int64_t>(), n) << size;
    EXPECT_EQ(m["per_token"].get<int64_t>(), 6 * n + 12 * 2 * 4 * 16 * 32) << size;
    EXPECT_EQ(m["per_iteration"].get<int64_t>(), (6 * n + 12 * 2 * 4 * 16 * 32) * 4 * 32) << size;
  }
}

TEST(Llama, DataNamesAMissingPathAndRefusesText) {
  const std::string missing =
      error_of<UsageError>([] { WorkloadUnderTest t("llama", Scale::tiny, {}, 1, c10::ScalarType::Float, "x.bin"); });
  EXPECT_NE(missing.find("--data x.bin: no such file or folder"), std::string::npos) << missing;
  const auto text = std::filesystem::temp_directory_path() / "tbd_llama_text.txt";
  std::ofstream(text) << "raw text, not token ids\n";
  const std::string e = error_of<UsageError>(
      [&] { WorkloadUnderTest t("llama", Scale::tiny, {}, 1, c10::ScalarType::Float, text.string()); });
  EXPECT_NE(e.find("llama --data reads token files"), std::string::npos) << e;
  EXPECT_NE(e.find("tokenize it first"), std::string::npos) << e;
  std::filesystem::remove(text);
}

// Writes tiny models' weights, input ids, logits and loss for
// tests/cli/llama_hf_test.sh, which loads them into Hugging Face's
// LlamaForCausalLM and compares. Runs only when that test names a folder.
TEST(LlamaHfParity, WritesTinyModelsForTheComparison) {
  const char* folder = std::getenv("TBD_LLAMA_HF_DIR");
  if (!folder) GTEST_SKIP() << "set TBD_LLAMA_HF_DIR to write the models (tests/cli/llama_hf_test.sh does)";
  torch::manual_seed(7);
  struct Variant {
    const char* name;
    int64_t kv_heads;
    bool tied;
    double rope_factor;
  };
  for (const Variant& v : {Variant{"gqa_untied", 2, false, 8.0}, Variant{"gqa_tied", 2, true, 32.0},
                           Variant{"mha_untied", 4, false, 8.0}, Variant{"mha_tied", 4, true, 32.0}}) {
    auto c = tiny_config(v.kv_heads, v.tied);
    c.rope_scaling.factor = v.rope_factor;
    nn::Llama model(c);
    {
      // Norm weights away from 1, so a misplaced norm weight shows, and
      // matrices 10 times the initial scale, so the logits are far from
      // uniform and every path (rotation, grouping, gating) moves them.
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters()) (p.dim() == 1 ? p.uniform_(0.5, 1.5) : p.normal_(0.0, 0.2));
    }
    const auto ids = torch::randint(c.vocabulary, {2, c.context}, torch::kInt64);
    const auto logits = model->forward(ids);
    const auto loss = torch::nn::functional::cross_entropy(
        logits.narrow(1, 0, c.context - 1).reshape({-1, c.vocabulary}), ids.narrow(1, 1, c.context - 1).reshape({-1}));
    c10::Dict<std::string, torch::Tensor> out;
    for (const auto& p : model->named_parameters()) out.insert("weight." + p.key(), p.value().detach());
    out.insert("input_ids", ids);
    out.insert("logits", logits.detach());
    out.insert("loss", loss.detach());
    out.insert("inverse_frequencies", nn::llama_inverse_frequencies(c));
    const int64_t config[] = {c.vocabulary, c.context,  c.layers, c.d_model, c.heads,
                              c.kv_heads,   c.head_dim, c.ffn,    c.tied,    c.rope_scaling.original_context};
    out.insert("config", torch::tensor(std::vector<int64_t>(std::begin(config), std::end(config))));
    out.insert("rope", torch::tensor({c.rope_theta, c.rope_scaling.factor, c.rope_scaling.low_freq_factor,
                                      c.rope_scaling.high_freq_factor, c.norm_eps},
                                     torch::kFloat64));
    const auto bytes = torch::pickle_save(c10::IValue(out));
    std::ofstream(std::string(folder) + "/" + v.name + ".pt", std::ios::binary).write(bytes.data(), bytes.size());
  }
}

}  // namespace
}  // namespace tbd
