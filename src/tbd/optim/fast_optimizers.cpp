#include "tbd/optim/fast_optimizers.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcdiv.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_lerp.h>
#include <ATen/ops/_foreach_maximum.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/_foreach_sqrt.h>
#include <ATen/ops/_fused_adagrad.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>

#include <cmath>

#include "tbd/core/error.h"

namespace tbd {
namespace {

using torch::Tensor;

// The parameters of a group that have a gradient, and their gradients:
// dense ones for the multi-tensor kernels, sparse ones (embedding tables with
// sparse gradients) apart, since those kernels take dense tensors only.
struct GroupGradients {
  std::vector<Tensor> params, grads;
  std::vector<Tensor> sparse_params, sparse_grads;
  bool sparse() const { return !sparse_params.empty(); }
};

GroupGradients gradients_of(torch::optim::OptimizerParamGroup& group) {
  GroupGradients d;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    const bool sparse = p.grad().is_sparse();
    (sparse ? d.sparse_params : d.params).push_back(p);
    (sparse ? d.sparse_grads : d.grads).push_back(p.grad());
  }
  return d;
}

Tensor run_closure(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

std::vector<at::Scalar> scalars(const std::vector<double>& v) { return {v.begin(), v.end()}; }

using StepCounters = std::unordered_map<const c10::TensorImpl*, Tensor>;

// The fused kernels read a parameter's step from a float tensor (torch.optim's
// state_steps): made once, at `step` − 1, and advanced by the caller with one
// multi-tensor add before the kernel.
Tensor step_counter(StepCounters& counters, const Tensor& p, int64_t step) {
  auto& counter = counters[p.unsafeGetTensorImpl()];
  if (!counter.defined())
    counter =
        torch::full({}, static_cast<double>(step - 1), torch::TensorOptions().dtype(torch::kFloat).device(p.device()));
  return counter;
}

std::vector<Tensor> counters_of(const StepCounters& counters) {
  std::vector<Tensor> out;
  for (const auto& [impl, t] : counters) out.push_back(t);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- SGD

FastSGD::FastSGD(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::SGDOptions defaults,
                 OptimizerImpl impl)
    : SGD(groups, defaults), impl_(impl) {}

Tensor FastSGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  at::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    GroupGradients d = gradients_of(group);
    // Sparse gradients (embedding tables): LibTorch's per-parameter update,
    // as torch.optim.SGD's sparse path; the dense rest of the group below.
    for (size_t i = 0; i < d.sparse_params.size(); ++i) {
      Tensor g = d.sparse_grads[i];
      if (o.weight_decay() != 0) g = g.add(d.sparse_params[i], o.weight_decay());
      if (o.momentum() != 0) {
        auto& slot = state_[d.sparse_params[i].unsafeGetTensorImpl()];
        if (!slot) slot = std::make_unique<torch::optim::SGDParamState>();
        auto& st = static_cast<torch::optim::SGDParamState&>(*slot);
        Tensor buf = st.momentum_buffer();
        if (!buf.defined()) {
          buf = g.clone().detach();
          st.momentum_buffer(buf);
        } else {
          buf.mul_(o.momentum()).add_(g, 1 - o.dampening());
        }
        g = o.nesterov() ? g.add(buf, o.momentum()) : buf;
      }
      d.sparse_params[i].add_(g, -o.lr());
    }
    if (d.params.empty()) continue;
    // Momentum buffers: those created now start as the gradient (with weight
    // decay), as in LibTorch and torch.optim.
    std::vector<Tensor> fresh_params, fresh_grads, fresh_bufs, params, grads, bufs;
    for (size_t i = 0; i < d.params.size(); ++i) {
      auto& slot = state_[d.params[i].unsafeGetTensorImpl()];
      const bool fresh = o.momentum() != 0 && !slot;
      if (!slot) slot = std::make_unique<torch::optim::SGDParamState>();
      auto& st = static_cast<torch::optim::SGDParamState&>(*slot);
      if (fresh) st.momentum_buffer(torch::empty_like(d.params[i], at::MemoryFormat::Preserve));
      (fresh ? fresh_params : params).push_back(d.params[i]);
      (fresh ? fresh_grads : grads).push_back(d.grads[i]);
      if (o.momentum() != 0) (fresh ? fresh_bufs : bufs).push_back(st.momentum_buffer());
    }
    for (const bool first : {true, false}) {
      auto& ps = first ? fresh_params : params;
      auto& gs = first ? fresh_grads : grads;
      auto& bs = first ? fresh_bufs : bufs;
      if (ps.empty()) continue;
      if (impl_ == OptimizerImpl::fused) {
        at::_fused_sgd_(ps, gs, bs, o.weight_decay(), o.momentum(), o.lr(), o.dampening(), o.nesterov(),
                        /*maximize=*/false, /*is_first_step=*/first);
        continue;
      }
      std::vector<Tensor> g = o.weight_decay() != 0 ? at::_foreach_add(gs, ps, o.weight_decay()) : gs;
      if (o.momentum() != 0) {
        if (first) {
          for (size_t i = 0; i < bs.size(); ++i) bs[i].copy_(g[i]);
        } else {
          at::_foreach_mul_(bs, o.momentum());
          at::_foreach_add_(bs, g, 1 - o.dampening());
        }
        g = o.nesterov() ? at::_foreach_add(g, bs, o.momentum()) : bs;
      }
      at::_foreach_add_(ps, g, -o.lr());
    }
  }
  return loss;
}

// ---------------------------------------------------------------- Adam, AdamW

template <class Base, class Options>
FastAdamBase<Base, Options>::FastAdamBase(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                          Options defaults, OptimizerImpl impl)
    : Base(groups, defaults), impl_(impl) {}

template <class Base, class Options>
Tensor FastAdamBase<Base, Options>::step(torch::optim::Optimizer::LossClosure closure) {
  constexpr bool decoupled = std::is_same_v<Options, torch::optim::AdamWOptions>;
  Tensor loss = run_closure(closure);
  at::NoGradGuard no_grad;
  for (auto& group : this->param_groups_) {
    const auto& o = static_cast<const Options&>(group.options());
    GroupGradients d = gradients_of(group);
    if (d.params.empty()) continue;
    if (d.sparse())
      throw Error("the fused and foreach Adam steps need dense gradients; use --optimizer-impl loop for sparse ones");
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    std::vector<Tensor> exp_avgs, exp_avg_sqs, max_sqs;
    std::vector<double> bias2_sqrt, step_sizes;  // the foreach path's per-parameter scalars
    std::vector<Tensor> steps;
    for (auto& p : d.params) {
      auto& slot = this->state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto st = std::make_unique<torch::optim::AdamParamState>();
        st->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        st->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.amsgrad()) st->max_exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(st);
      }
      auto& st = static_cast<torch::optim::AdamParamState&>(*slot);
      st.step(st.step() + 1);
      exp_avgs.push_back(st.exp_avg());
      exp_avg_sqs.push_back(st.exp_avg_sq());
      if (o.amsgrad()) max_sqs.push_back(st.max_exp_avg_sq());
      if (impl_ == OptimizerImpl::fused) {
        steps.push_back(step_counter(step_tensors_, p, st.step()));
      } else {  // the foreach path computes the bias corrections here; the fused kernels from `steps`
        const double b1 = 1 - std::pow(beta1, static_cast<double>(st.step()));
        const double b2 = 1 - std::pow(beta2, static_cast<double>(st.step()));
        bias2_sqrt.push_back(std::sqrt(b2));
        step_sizes.push_back(-o.lr() / b1);
      }
    }
    if (impl_ == OptimizerImpl::fused) {
      at::_foreach_add_(steps, 1);
      if constexpr (decoupled)
        at::_fused_adamw_(d.params, d.grads, exp_avgs, exp_avg_sqs, max_sqs, steps, o.lr(), beta1, beta2,
                          o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false);
      else
        at::_fused_adam_(d.params, d.grads, exp_avgs, exp_avg_sqs, max_sqs, steps, o.lr(), beta1, beta2,
                         o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false);
      continue;
    }
    std::vector<Tensor> grads = d.grads;
    if (o.weight_decay() != 0) {
      if (decoupled)
        at::_foreach_mul_(d.params, 1 - o.lr() * o.weight_decay());
      else
        grads = at::_foreach_add(grads, d.params, o.weight_decay());
    }
    at::_foreach_lerp_(exp_avgs, grads, 1 - beta1);
    at::_foreach_mul_(exp_avg_sqs, beta2);
    at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
    if (o.amsgrad()) at::_foreach_maximum_(max_sqs, exp_avg_sqs);
    std::vector<Tensor> denom = at::_foreach_sqrt(o.amsgrad() ? max_sqs : exp_avg_sqs);
    at::_foreach_div_(denom, scalars(bias2_sqrt));
    at::_foreach_add_(denom, o.eps());
    at::_foreach_addcdiv_(d.params, exp_avgs, denom, scalars(step_sizes));
  }
  return loss;
}

template <class Base, class Options>
std::vector<torch::Tensor> FastAdamBase<Base, Options>::extra_state() const {
  return counters_of(step_tensors_);
}

template class FastAdamBase<torch::optim::Adam, torch::optim::AdamOptions>;
template class FastAdamBase<torch::optim::AdamW, torch::optim::AdamWOptions>;

// ---------------------------------------------------------------- Adagrad

FastAdagrad::FastAdagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                         torch::optim::AdagradOptions defaults, OptimizerImpl impl)
    : Adagrad(groups, defaults), impl_(impl) {}

Tensor FastAdagrad::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  at::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdagradOptions&>(group.options());
    GroupGradients d = gradients_of(group);
    auto state_of = [&](const Tensor& p) -> torch::optim::AdagradParamState& {
      auto& slot = state_[p.unsafeGetTensorImpl()];  // made by LibTorch's constructor, sum at the initial value
      auto& st = static_cast<torch::optim::AdagradParamState&>(*slot);
      st.step(st.step() + 1);
      return st;
    };
    auto step_size = [&](int64_t step) { return o.lr() / (1.0 + static_cast<double>(step - 1) * o.lr_decay()); };
    for (size_t i = 0; i < d.sparse_params.size(); ++i) {
      if (o.weight_decay() != 0)
        throw Error("Adagrad's weight decay does not apply to sparse gradients (as in torch.optim): set it to 0");
      auto& st = state_of(d.sparse_params[i]);
      const Tensor g = d.sparse_grads[i].coalesce();  // each row once
      TORCH_CHECK(g.sparse_dim() == 1, "sparse Adagrad takes row-sparse gradients (an embedding table's)");
      const Tensor rows = g._indices()[0], values = g._values();
      st.sum().index_add_(0, rows, values.square());
      const Tensor denominator = st.sum().index_select(0, rows).sqrt_().add_(o.eps());
      d.sparse_params[i].index_add_(0, rows, values / denominator, -step_size(st.step()));
    }
    if (d.params.empty()) continue;
    std::vector<Tensor> sums, steps;
    std::vector<double> minus_step_sizes;
    for (auto& p : d.params) {
      auto& st = state_of(p);
      sums.push_back(st.sum());
      if (impl_ == OptimizerImpl::fused) {
        steps.push_back(step_counter(step_tensors_, p, st.step()));
      } else {
        minus_step_sizes.push_back(-step_size(st.step()));
      }
    }
    if (impl_ == OptimizerImpl::fused) {
      at::_foreach_add_(steps, 1);
      at::_fused_adagrad_(d.params, d.grads, sums, steps, o.lr(), o.lr_decay(), o.weight_decay(), o.eps(),
                          /*maximize=*/false);
      continue;
    }
    std::vector<Tensor> grads = o.weight_decay() != 0 ? at::_foreach_add(d.grads, d.params, o.weight_decay()) : d.grads;
    at::_foreach_addcmul_(sums, grads, grads, 1);
    std::vector<Tensor> denominators = at::_foreach_sqrt(sums);
    at::_foreach_add_(denominators, o.eps());
    at::_foreach_addcdiv_(d.params, grads, denominators, scalars(minus_step_sizes));
  }
  return loss;
}

std::vector<Tensor> FastAdagrad::extra_state() const { return counters_of(step_tensors_); }

// ---------------------------------------------------------------- RMSprop

FastRMSprop::FastRMSprop(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                         torch::optim::RMSpropOptions defaults, OptimizerImpl impl)
    : RMSprop(groups, defaults), impl_(impl) {}

// ATen has no fused RMSprop: fused and foreach both take the foreach ops.
Tensor FastRMSprop::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  at::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::RMSpropOptions&>(group.options());
    GroupGradients d = gradients_of(group);
    if (d.params.empty()) continue;
    if (d.sparse())
      throw Error("the foreach RMSprop step needs dense gradients; use --optimizer-impl loop for sparse ones");
    std::vector<Tensor> square_avgs, bufs, grad_avgs;
    for (auto& p : d.params) {
      auto& slot = state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto st = std::make_unique<torch::optim::RMSpropParamState>();
        st->square_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.momentum() > 0) st->momentum_buffer(torch::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.centered()) st->grad_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(st);
      }
      auto& st = static_cast<torch::optim::RMSpropParamState&>(*slot);
      st.step(st.step() + 1);
      square_avgs.push_back(st.square_avg());
      if (o.momentum() > 0) bufs.push_back(st.momentum_buffer());
      if (o.centered()) grad_avgs.push_back(st.grad_avg());
    }
    std::vector<Tensor> grads = o.weight_decay() != 0 ? at::_foreach_add(d.grads, d.params, o.weight_decay()) : d.grads;
    at::_foreach_mul_(square_avgs, o.alpha());
    at::_foreach_addcmul_(square_avgs, grads, grads, 1 - o.alpha());
    std::vector<Tensor> avg;
    if (o.centered()) {
      at::_foreach_lerp_(grad_avgs, grads, 1 - o.alpha());
      avg = at::_foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1);
      at::_foreach_sqrt_(avg);
    } else {
      avg = at::_foreach_sqrt(square_avgs);
    }
    at::_foreach_add_(avg, o.eps());
    if (o.momentum() > 0) {
      at::_foreach_mul_(bufs, o.momentum());
      at::_foreach_addcdiv_(bufs, grads, avg);
      at::_foreach_add_(d.params, bufs, -o.lr());
    } else {
      at::_foreach_addcdiv_(d.params, grads, avg, -o.lr());
    }
  }
  return loss;
}

// ---------------------------------------------------------------- factories

std::unique_ptr<torch::optim::SGD> make_sgd(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                            torch::optim::SGDOptions defaults, OptimizerImpl impl) {
  if (impl == OptimizerImpl::loop) return std::make_unique<torch::optim::SGD>(groups, defaults);
  return std::make_unique<FastSGD>(groups, defaults, impl);
}

std::unique_ptr<torch::optim::Adam> make_adam(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                              torch::optim::AdamOptions defaults, OptimizerImpl impl) {
  if (impl == OptimizerImpl::loop) return std::make_unique<torch::optim::Adam>(groups, defaults);
  return std::make_unique<FastAdam>(groups, defaults, impl);
}

std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                torch::optim::AdamWOptions defaults, OptimizerImpl impl) {
  if (impl == OptimizerImpl::loop) return std::make_unique<torch::optim::AdamW>(groups, defaults);
  return std::make_unique<FastAdamW>(groups, defaults, impl);
}

std::unique_ptr<torch::optim::RMSprop> make_rmsprop(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                    torch::optim::RMSpropOptions defaults, OptimizerImpl impl) {
  if (impl == OptimizerImpl::loop) return std::make_unique<torch::optim::RMSprop>(groups, defaults);
  return std::make_unique<FastRMSprop>(groups, defaults, impl);
}

std::unique_ptr<torch::optim::Adagrad> make_adagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                                                    torch::optim::AdagradOptions defaults, OptimizerImpl impl) {
  if (impl == OptimizerImpl::loop) return std::make_unique<torch::optim::Adagrad>(groups, defaults);
  return std::make_unique<FastAdagrad>(groups, defaults, impl);
}

std::unique_ptr<torch::optim::SGD> make_sgd(std::vector<Tensor> params, torch::optim::SGDOptions defaults,
                                            OptimizerImpl impl) {
  return make_sgd({torch::optim::OptimizerParamGroup(std::move(params))}, defaults, impl);
}

std::unique_ptr<torch::optim::Adam> make_adam(std::vector<Tensor> params, torch::optim::AdamOptions defaults,
                                              OptimizerImpl impl) {
  return make_adam({torch::optim::OptimizerParamGroup(std::move(params))}, defaults, impl);
}

std::unique_ptr<torch::optim::RMSprop> make_rmsprop(std::vector<Tensor> params, torch::optim::RMSpropOptions defaults,
                                                    OptimizerImpl impl) {
  return make_rmsprop({torch::optim::OptimizerParamGroup(std::move(params))}, defaults, impl);
}

Tensor clip_gradients(const std::vector<Tensor>& parameters, double max_norm) {
  std::vector<Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return torch::zeros({});
  at::NoGradGuard no_grad;
  const Tensor total = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
  const Tensor coefficient = (max_norm / (total + 1e-6)).clamp_max(1.0);
  at::_foreach_mul_(grads, coefficient);
  return total;
}

}  // namespace tbd
