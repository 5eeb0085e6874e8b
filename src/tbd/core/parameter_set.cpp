#include "tbd/core/parameter_set.h"

namespace tbd {

int64_t ParameterSet::parameter_count() const {
  int64_t n = 0;
  for (const auto& w : weights) n += w.numel();
  return n;
}

int64_t ParameterSet::trainable_parameter_count() const {
  int64_t n = 0;
  for (const auto& w : weights)
    if (w.requires_grad()) n += w.numel();
  return n;
}

void ParameterSet::add(const torch::nn::Module& module) {
  for (const auto& p : module.parameters()) weights.push_back(p);
  for (const auto& b : module.buffers()) buffers.push_back(b);
}

void ParameterSet::add(const torch::optim::Optimizer& optimizer) {
  for (const auto& [key, state] : optimizer.state()) {
    (void)key;
    // OptimizerParamState has no generic tensor list: each LibTorch optimizer
    // keeps its own state type, so read the tensors of each one we know.
    auto* s = state.get();
    if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(s)) {
      if (sgd->momentum_buffer().defined()) optimizer_state.push_back(sgd->momentum_buffer());
    } else if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(s)) {
      optimizer_state.push_back(adam->exp_avg());
      optimizer_state.push_back(adam->exp_avg_sq());
      if (adam->max_exp_avg_sq().defined()) optimizer_state.push_back(adam->max_exp_avg_sq());
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(s)) {
      optimizer_state.push_back(adamw->exp_avg());
      optimizer_state.push_back(adamw->exp_avg_sq());
      if (adamw->max_exp_avg_sq().defined()) optimizer_state.push_back(adamw->max_exp_avg_sq());
    } else if (auto* rms = dynamic_cast<torch::optim::RMSpropParamState*>(s)) {
      optimizer_state.push_back(rms->square_avg());
      if (rms->momentum_buffer().defined()) optimizer_state.push_back(rms->momentum_buffer());
      if (rms->grad_avg().defined()) optimizer_state.push_back(rms->grad_avg());
    } else if (auto* adagrad = dynamic_cast<torch::optim::AdagradParamState*>(s)) {
      optimizer_state.push_back(adagrad->sum());
    }
  }
  if (const auto* extra = dynamic_cast<const ExtraOptimizerState*>(&optimizer))
    for (const auto& t : extra->extra_state()) optimizer_state.push_back(t);
}

ParameterSet ParameterSet::of(const torch::nn::Module& model, const torch::optim::Optimizer* optimizer) {
  ParameterSet s;
  s.add(model);
  if (optimizer) s.add(*optimizer);
  return s;
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace tbd
