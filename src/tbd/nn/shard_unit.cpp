#include "tbd/nn/shard_unit.h"

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <atomic>

namespace tbd::nn {

namespace {
std::atomic<UnitSharder*> attached{nullptr};
}  // namespace

void attach_unit_sharder(UnitSharder* sharder) { attached.store(sharder); }

torch::Tensor run_unit(const torch::nn::Module& unit, const std::function<torch::Tensor()>& forward) {
  UnitSharder* sharder = attached.load();
  if (sharder == nullptr || !sharder->holds(unit)) return forward();
  sharder->before_forward(unit);
  return sharder->after_forward(unit, forward());
}

}  // namespace tbd::nn

namespace tbd::nn {

std::vector<torch::Tensor> parameters_cast_by_autocast(const torch::nn::Module& unit) {
  std::vector<torch::Tensor> out;
  for (const auto& m : unit.modules(/*include_self=*/true)) {
    if (const auto* l = dynamic_cast<const torch::nn::LinearImpl*>(m.get())) out.push_back(l->weight);
    if (const auto* c = dynamic_cast<const torch::nn::Conv1dImpl*>(m.get())) out.push_back(c->weight);
    if (const auto* c = dynamic_cast<const torch::nn::Conv2dImpl*>(m.get())) out.push_back(c->weight);
    if (const auto* c = dynamic_cast<const torch::nn::Conv3dImpl*>(m.get())) out.push_back(c->weight);
  }
  return out;
}

}  // namespace tbd::nn
