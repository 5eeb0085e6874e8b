// The fused and foreach optimizer steps against LibTorch's reference
// optimizers: the same weights after several steps, to float32 rounding, for
// every option the workloads use; the same state for the memory probe; and
// one-pass clipping against clip_grad_norm_.
#include <gtest/gtest.h>

#include <torch/cuda.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/utils/clip_grad.h>

#include <functional>

#include "tbd/core/error.h"
#include "tbd/core/parameter_set.h"
#include "tbd/optim/fast_optimizers.h"

namespace tbd {
namespace {

using Make = std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>, OptimizerImpl)>;

// Parameters of several shapes (a matrix, a vector, a 4-D kernel), the same
// values on both sides, on the device under test.
std::vector<torch::Tensor> parameters(uint64_t seed, const c10::Device& device = c10::kCPU) {
  torch::manual_seed(static_cast<int64_t>(seed));
  std::vector<torch::Tensor> p = {torch::randn({7, 5}), torch::randn({5}), torch::randn({3, 2, 3, 3})};
  for (auto& t : p) t = t.to(device).requires_grad_(true);
  return p;
}

// `steps` steps with the same pseudo-random gradients on both sides; the
// largest relative difference of the weights at the end.
double max_difference(const Make& make, OptimizerImpl impl, const c10::Device& device, int steps = 12) {
  auto reference = parameters(1, device), candidate = parameters(1, device);
  auto ref_opt = make(reference, OptimizerImpl::loop);
  auto cand_opt = make(candidate, impl);
  torch::manual_seed(99);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < reference.size(); ++i) {
      const auto g = torch::randn_like(reference[i]);
      reference[i].mutable_grad() = g.clone();
      candidate[i].mutable_grad() = g.clone();
    }
    ref_opt->step();
    cand_opt->step();
  }
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const auto diff = (reference[i] - candidate[i]).abs().max().item<double>();
    worst = std::max(worst, diff / std::max(1e-3, reference[i].abs().max().item<double>()));
  }
  // The optimizer state is LibTorch's own layout, so the memory probe reads it
  // alike; the fused Adam adds one float step counter per parameter (as
  // torch.optim's state holds `step` tensors), which it counts as well.
  ParameterSet a, b;
  a.add(*ref_opt);
  b.add(*cand_opt);
  size_t counters = 0;
  for (const auto& t : b.optimizer_state) counters += t.dim() == 0;
  EXPECT_EQ(a.optimizer_state.size(), b.optimizer_state.size() - counters);
  EXPECT_TRUE(counters == 0 || counters == reference.size()) << counters << " step counters";
  return worst;
}

// On `device`: the CPU, or the GPU in the Gpu.* test below.
void expect_equivalent(const c10::Device& device, const Make& make, const char* what) {
  for (OptimizerImpl impl : {OptimizerImpl::fused, OptimizerImpl::foreach})
    EXPECT_LT(max_difference(make, impl, device), 2e-5) << what << " " << to_string(impl) << " on " << device;
}

void check_sgd(const c10::Device& device) {
  using O = torch::optim::SGDOptions;
  expect_equivalent(
      device, [](auto p, auto impl) { return make_sgd(p, O(0.1), impl); }, "plain");
  expect_equivalent(
      device, [](auto p, auto impl) { return make_sgd(p, O(0.1).momentum(0.9).weight_decay(1e-4), impl); },
      "momentum + weight decay (resnet50, faster_rcnn)");
  expect_equivalent(
      device, [](auto p, auto impl) { return make_sgd(p, O(0.05).momentum(0.9).nesterov(true), impl); },
      "nesterov (deepspeech2)");
  expect_equivalent(
      device, [](auto p, auto impl) { return make_sgd(p, O(0.05).momentum(0.8).dampening(0.3), impl); }, "dampening");
}

void check_adam_and_adamw(const c10::Device& device) {
  using A = torch::optim::AdamOptions;
  using W = torch::optim::AdamWOptions;
  expect_equivalent(
      device, [](auto p, auto impl) { return make_adam(p, A(1e-2), impl); }, "adam (ncf)");
  expect_equivalent(
      device,
      [](auto p, auto impl) {
        return make_adam(p, A(1e-2).betas({0.9, 0.98}).eps(1e-9), impl);
      },
      "adam (transformer)");
  expect_equivalent(
      device, [](auto p, auto impl) { return make_adam(p, A(1e-2).weight_decay(0.01).amsgrad(true), impl); },
      "adam, L2 decay, amsgrad");
  expect_equivalent(
      device,
      [](auto p, auto impl) {
        return make_adamw({torch::optim::OptimizerParamGroup(p)}, W(6e-3).betas({0.9, 0.95}).weight_decay(0.1), impl);
      },
      "adamw (gpt)");
}

void check_rmsprop(const c10::Device& device) {
  using R = torch::optim::RMSpropOptions;
  expect_equivalent(
      device,
      [](auto p, auto impl) {
        return make_rmsprop(p, R(0.01).alpha(0.9).eps(1.0).momentum(0.9).weight_decay(4e-5), impl);
      },
      "inception3's");
  expect_equivalent(
      device, [](auto p, auto impl) { return make_rmsprop(p, R(0.01).centered(true), impl); }, "centered");
}

void check_adagrad(const c10::Device& device) {
  using G = torch::optim::AdagradOptions;
  expect_equivalent(
      device,
      [](auto p, auto impl) { return make_adagrad({torch::optim::OptimizerParamGroup(p)}, G(0.05).eps(1e-10), impl); },
      "adagrad (dlrm dcnv2)");
  expect_equivalent(
      device,
      [](auto p, auto impl) {
        return make_adagrad({torch::optim::OptimizerParamGroup(p)},
                            G(0.05).lr_decay(0.1).weight_decay(1e-2).initial_accumulator_value(0.1), impl);
      },
      "adagrad, lr decay, weight decay, initial accumulator");
}

void check_parameter_groups(const c10::Device& device) {
  // gpt: decay on matrices, none on vectors, in one optimizer.
  const auto make = [](std::vector<torch::Tensor> p, OptimizerImpl impl) -> std::unique_ptr<torch::optim::Optimizer> {
    using W = torch::optim::AdamWOptions;
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<torch::Tensor>{p[0], p[2]}, std::make_unique<W>(W(1e-2).weight_decay(0.1)));
    groups.emplace_back(std::vector<torch::Tensor>{p[1]}, std::make_unique<W>(W(1e-2).weight_decay(0.0)));
    return make_adamw(groups, W(1e-2), impl);
  };
  expect_equivalent(device, make, "two groups");
}

TEST(FastOptimizers, SgdMatchesLibTorch) { check_sgd(c10::kCPU); }
TEST(FastOptimizers, AdamAndAdamWMatchLibTorch) { check_adam_and_adamw(c10::kCPU); }
TEST(FastOptimizers, RmspropMatchesLibTorch) { check_rmsprop(c10::kCPU); }
TEST(FastOptimizers, AdagradMatchesLibTorch) { check_adagrad(c10::kCPU); }
TEST(FastOptimizers, ParameterGroupsKeepTheirOwnOptions) { check_parameter_groups(c10::kCPU); }

// The same comparisons on the GPU, where the fused steps are ATen's CUDA
// kernels (docs/gpu.md); skipped without one.
TEST(Gpu, FusedAndForeachOptimizersMatchLibTorchOnCuda) {
  if (!torch::cuda::is_available())
    GTEST_SKIP() << "needs a CUDA device (this LibTorch has no CUDA, or no GPU is visible)";
  const c10::Device cuda(c10::kCUDA, 0);
  check_sgd(cuda);
  check_adam_and_adamw(cuda);
  check_rmsprop(cuda);
  check_adagrad(cuda);
  check_parameter_groups(cuda);
}

// Embedding bags with sparse gradients and dense MLPs in one group (dlrm):
// `make` steps them with the loop and with `impl`; the weights must agree.
void expect_sparse_and_dense_agree(const Make& make, OptimizerImpl impl, const std::string& what) {
  torch::manual_seed(3);
  torch::nn::Embedding ea(torch::nn::EmbeddingOptions(10, 4).sparse(true)),
      eb(torch::nn::EmbeddingOptions(10, 4).sparse(true));
  torch::nn::Linear la(4, 2), lb(4, 2);
  eb->weight.data().copy_(ea->weight.data());
  lb->weight.data().copy_(la->weight.data());
  lb->bias.data().copy_(la->bias.data());
  const auto group = [](auto& e, auto& l) {
    auto p = e->parameters();
    for (const auto& q : l->parameters()) p.push_back(q);
    return p;
  };
  auto oa = make(group(ea, la), OptimizerImpl::loop);
  auto ob = make(group(eb, lb), impl);
  const auto before = ea->weight.clone();
  for (int s = 0; s < 3; ++s) {
    // Repeated ids: the sparse gradient holds row 3 twice until coalesced.
    const auto ids = torch::tensor({1, 3, 3, s + 5}, torch::kLong);
    la->forward(ea->forward(ids)).pow(2).sum().backward();
    lb->forward(eb->forward(ids)).pow(2).sum().backward();
    ASSERT_TRUE(eb->weight.grad().is_sparse());
    ASSERT_FALSE(lb->weight.grad().is_sparse());
    oa->step();
    ob->step();
    oa->zero_grad();
    ob->zero_grad();
  }
  const auto label = what + ", " + to_string(impl);
  EXPECT_FALSE(torch::allclose(before, ea->weight)) << label << ": the tables did not move";
  EXPECT_TRUE(torch::equal(before[0], eb->weight[0])) << label << ": a row no batch looked up changed";
  EXPECT_TRUE(torch::allclose(ea->weight, eb->weight, 1e-6, 1e-7)) << label;
  EXPECT_TRUE(torch::allclose(la->weight, lb->weight, 1e-6, 1e-7)) << label;
  EXPECT_TRUE(torch::allclose(la->bias, lb->bias, 1e-6, 1e-7)) << label;
}

TEST(FastOptimizers, SparseGradientsKeepTheirSparsePathBesideDenseOnes) {
  // Plain SGD (dlrm kaggle, rm1-3), with momentum as well, where LibTorch's
  // sparse path keeps a momentum buffer too; Adagrad (dlrm dcnv2), whose
  // sparse path updates the looked-up rows' accumulators only.
  for (OptimizerImpl impl : {OptimizerImpl::fused, OptimizerImpl::foreach}) {
    for (const double momentum : {0.0, 0.9})
      expect_sparse_and_dense_agree(
          [momentum](auto p, auto i) { return make_sgd(p, torch::optim::SGDOptions(0.5).momentum(momentum), i); }, impl,
          "sgd, momentum " + std::to_string(momentum));
    expect_sparse_and_dense_agree(
        [](auto p, auto i) {
          return make_adagrad({torch::optim::OptimizerParamGroup(p)}, torch::optim::AdagradOptions(0.5).eps(1e-10), i);
        },
        impl, "adagrad");
  }
}

TEST(FastOptimizers, ClippingInOnePassMatchesClipGradNorm) {
  auto a = parameters(5), b = parameters(5);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto g = torch::randn_like(a[i]) * 10;
    a[i].mutable_grad() = g.clone();
    b[i].mutable_grad() = g.clone();
  }
  const double norm_a = torch::nn::utils::clip_grad_norm_(a, 1.0);
  const double norm_b = clip_gradients(b, 1.0).item<double>();
  EXPECT_NEAR(norm_a, norm_b, 1e-4 * norm_a);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i].grad(), b[i].grad(), 1e-5, 1e-7));
  // Below the bound nothing changes.
  const auto before = b[0].grad().clone();
  clip_gradients(b, 1e6);
  EXPECT_TRUE(torch::allclose(before, b[0].grad(), 1e-6, 0));
}

TEST(FastOptimizers, TheImplementationIsNamedAndChecked) {
  EXPECT_EQ(parse_optimizer_impl("foreach"), OptimizerImpl::foreach);
  EXPECT_STREQ(to_string(OptimizerImpl::fused), "fused");
  EXPECT_THROW(parse_optimizer_impl("apex"), UsageError);
  // loop is LibTorch's own class; the others are multi-tensor steps.
  auto p = parameters(1);
  EXPECT_EQ(dynamic_cast<MultiTensorStep*>(make_sgd(p, torch::optim::SGDOptions(0.1), OptimizerImpl::loop).get()),
            nullptr);
  EXPECT_NE(dynamic_cast<MultiTensorStep*>(make_sgd(p, torch::optim::SGDOptions(0.1), OptimizerImpl::fused).get()),
            nullptr);
}

}  // namespace
}  // namespace tbd
