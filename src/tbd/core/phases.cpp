#include "tbd/core/phases.h"

#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/optim/optimizer.h>

#include "tbd/core/grad_scaler.h"

#include <chrono>
#include <exception>
#include <utility>

namespace tbd {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
  }
  return "?";
}

namespace {
const char* range_name(Phase p) {
  switch (p) {
    case Phase::forward: return "tbd::forward";
    case Phase::backward: return "tbd::backward";
    case Phase::optimizer: return "tbd::optimizer";
  }
  return "tbd::?";
}
}  // namespace

PhaseScope::PhaseScope(Phases& owner, Phase phase) : owner_(&owner), phase_(phase) {
  owner_->begin(phase_);
  range_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (range_->isActive()) range_->before(range_name(phase_));
  if (phase_ == Phase::forward && owner_->autocast()) {
    const auto type = owner_->device_.type();
    at::autocast::set_autocast_enabled(type, true);
    at::autocast::set_autocast_dtype(type, owner_->autocast_dtype_);
    at::autocast::increment_nesting();
    autocast_ = true;
  }
}

PhaseScope::PhaseScope(PhaseScope&& other) noexcept
    : owner_(other.owner_), phase_(other.phase_), range_(std::move(other.range_)), autocast_(other.autocast_) {
  other.owner_ = nullptr;
}

namespace {
double steady_seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A gradient synchronisation that fails while a scope is destroyed cannot
// throw from the destructor; it is rethrown when this thread next opens a phase.
thread_local std::exception_ptr g_deferred_error;
}  // namespace

PhaseScope::~PhaseScope() {
  try {
    end();
  } catch (...) {
    g_deferred_error = std::current_exception();
  }
}

void PhaseScope::end() {
  if (!owner_) return;
  Phases* owner = owner_;
  owner_ = nullptr;
  if (autocast_) {
    const auto type = owner->device_.type();
    // Cast weights are cached per autocast region; drop them as PyTorch does
    // when the outermost region exits, so nothing carries into the next step.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(type, false);
  }
  // Data-parallel runs average gradients as backward ends (as DDP does), so
  // whatever runs before the optimizer step (clipping) sees the global gradient.
  std::exception_ptr error;
  // A micro-batch before the last of a gradient-accumulation step: its
  // gradients are not the step's yet.
  const bool completes_step = phase_ != Phase::backward || std::exchange(owner->backward_completes_step_, true);
  if (phase_ == Phase::backward && completes_step && owner->sync_) {
    try {
      const double t0 = steady_seconds_now();
      owner->sync_->synchronize();
      owner->clock_.sync_s += steady_seconds_now() - t0;
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (!error && phase_ == Phase::backward && completes_step && owner->scaler_) {
    try {
      owner->scaler_->unscale();
    } catch (...) {
      error = std::current_exception();
    }
  }
  range_.reset();  // ends the RecordFunction range
  owner->end(phase_);
  if (error) std::rethrow_exception(error);
}

c10::ScalarType autocast_type(Precision p) {
  switch (p) {
    case Precision::bf16: return c10::ScalarType::BFloat16;
    case Precision::fp16: return c10::ScalarType::Half;
    case Precision::fp32:
    case Precision::tf32: break;
  }
  return c10::ScalarType::Float;
}

Phases::Phases(c10::Device device, c10::ScalarType autocast_dtype, std::vector<PhaseListener*> listeners)
    : device_(device), autocast_dtype_(autocast_dtype), listeners_(std::move(listeners)) {}

void Phases::begin(Phase p) {
  if (g_deferred_error) std::rethrow_exception(std::exchange(g_deferred_error, nullptr));
  for (auto* l : listeners_) l->on_phase_begin(p);
  opened_at_[phase_index(p)] = steady_seconds_now();
}

void Phases::end(Phase p) {
  clock_.seconds[phase_index(p)] += steady_seconds_now() - opened_at_[phase_index(p)];
  for (auto* l : listeners_) l->on_phase_end(p);
}

void Phases::backward(const at::Tensor& loss, bool completes_step) {
  if (sync_) sync_->expect_backward(completes_step);
  auto scope = backward_scope();
  backward_completes_step_ = completes_step;
  if (scaler_) {
    scaler_->scale(loss).backward();
  } else {
    loss.backward();
  }
  scope.end();  // not from the destructor: a failed synchronisation must propagate
}

void Phases::optimizer_step(torch::optim::Optimizer& optimizer) {
  auto scope = optimizer_scope();
  if (!scaler_ || scaler_->step_allowed()) optimizer.step();
  // Sharded runs drop their gradients (views of their buckets, which
  // zero_grad's detach_ refuses) and gather the stepped shards first.
  if (sync_) sync_->after_optimizer_step();
  optimizer.zero_grad(true);
  if (scaler_) scaler_->update();
}

}  // namespace tbd
