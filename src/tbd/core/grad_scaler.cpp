#include "tbd/core/grad_scaler.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>

namespace tbd {

GradScaler::GradScaler(std::vector<at::Tensor> parameters, GradScalerOptions options)
    : parameters_(std::move(parameters)), options_(options) {
  const auto device = parameters_.empty() ? c10::Device(c10::kCPU) : parameters_.front().device();
  const auto on = [&](c10::ScalarType t) { return at::TensorOptions().dtype(t).device(device); };
  // The scale lives on the device, as PyTorch keeps it, so no step waits for the host.
  scale_ = at::full({1}, options_.init_scale, on(c10::kFloat));
  growth_tracker_ = at::zeros({1}, on(c10::kInt));
  found_inf_ = at::zeros({1}, on(c10::kFloat));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const { return loss * scale_.to(loss.dtype()); }

void GradScaler::unscale() {
  if (unscaled_) return;
  unscaled_ = true;
  finite_ = -1;
  found_inf_.zero_();
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters_) {
    const auto& g = p.grad();
    if (g.defined()) grads.push_back(g.is_sparse() ? g._values() : g);  // values: a view, unscaled in place
  }
  if (grads.empty()) return;
  // The kernel wants float32 inverse scale; gradients of any float dtype.
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, scale_.reciprocal());
}

bool GradScaler::step_allowed() {
  unscale();  // a workload that never asked: unscale before the step
  // One device-to-host read per step; update() reuses it.
  if (finite_ < 0) finite_ = found_inf_.item<float>() == 0.0f ? 1 : 0;
  return finite_ == 1;
}

void GradScaler::update() {
  if (!step_allowed()) ++skipped_;
  ++steps_;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor, options_.backoff_factor,
                         options_.growth_interval);
  unscaled_ = false;
}

double GradScaler::current_scale() const { return scale_.item<double>(); }

}  // namespace tbd
