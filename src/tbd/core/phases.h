// How a training step says where it is. Each phase opens a user-scope
// RecordFunction range (tbd::forward, tbd::backward, tbd::optimizer) so traces
// show it, and notifies the listeners (probes) so they can attribute work.
// Forward also enables autocast when the run asks for bf16/fp16.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "tbd/core/options.h"

namespace at {
struct RecordFunction;
class Tensor;
}  // namespace at
namespace torch::optim {
class Optimizer;
}

namespace tbd {

// The type autocast runs a step of --precision p in: BFloat16, Half, or
// Float where there is no autocast (fp32, tf32).
c10::ScalarType autocast_type(Precision p);

enum class Phase { forward, backward, optimizer };
const char* to_string(Phase p);

// Per-phase arrays hold kPhaseCount slots in the enum's order: index them
// with phase_index(), iterate kPhases. Probes that also count work outside
// any phase keep it in one more slot, kOutsidePhases.
constexpr std::size_t kPhaseCount = 3;
constexpr std::array<Phase, kPhaseCount> kPhases = {Phase::forward, Phase::backward, Phase::optimizer};
constexpr std::size_t phase_index(Phase p) { return static_cast<std::size_t>(p); }
constexpr std::size_t kOutsidePhases = kPhaseCount;

class PhaseListener {
 public:
  virtual ~PhaseListener() = default;
  virtual void on_phase_begin(Phase) {}
  virtual void on_phase_end(Phase) {}
};

// Makes gradients consistent across data-parallel ranks when a backward
// phase ends (src/tbd/dist/gradient_reducer); absent in single-process runs.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Told before each backward whether it completes the optimizer step's
  // gradients. false: a --grad-accum micro-batch before the last, whose
  // gradients only accumulate in .grad and must not be reduced (DDP's
  // no_sync()); synchronize() is then not called for it.
  virtual void expect_backward(bool completes_step) = 0;
  virtual void synchronize() = 0;
  // Sharded data parallelism (ZeRO): the optimizer holds this rank's shards
  // of the parameters and their gradients only. Clipping then scales those
  // shards by the norm over every rank's (clip_global_norm: returns the norm
  // before clipping), and after each optimizer step the updated shards are
  // gathered back into the whole parameters (after_optimizer_step).
  virtual bool shards_optimizer() const { return false; }
  virtual double clip_global_norm(double /*max_norm*/) { return 0; }
  virtual void after_optimizer_step() {}
};

// Host time spent in each phase since the last reset: steady-clock reads at
// the phases' boundaries, nothing else (cheap enough for the timed windows).
// The data-parallel gradient synchronisation at the end of backward is
// counted in `sync_s` and also inside backward's time.
struct PhaseClock {
  std::array<double, kPhaseCount> seconds{};  // by phase_index()
  double sync_s = 0;
  double of(Phase p) const { return seconds[phase_index(p)]; }
};

class Phases;
class GradScaler;

// RAII range of one phase; ends when it goes out of scope (or at end()).
class PhaseScope {
 public:
  PhaseScope(Phases& owner, Phase phase);
  PhaseScope(PhaseScope&& other) noexcept;
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;
  PhaseScope& operator=(PhaseScope&&) = delete;
  ~PhaseScope();
  void end();

 private:
  Phases* owner_;
  Phase phase_;
  std::unique_ptr<at::RecordFunction> range_;
  bool autocast_ = false;
};

class Phases {
 public:
  // autocast_dtype: Float for fp32 (no autocast), BFloat16 or Half otherwise.
  Phases(c10::Device device, c10::ScalarType autocast_dtype, std::vector<PhaseListener*> listeners = {});

  PhaseScope forward() { return PhaseScope(*this, Phase::forward); }
  PhaseScope backward_scope() { return PhaseScope(*this, Phase::backward); }
  PhaseScope optimizer_scope() { return PhaseScope(*this, Phase::optimizer); }

  // loss.backward() in its range. With fp16 loss scaling, the loss is scaled
  // first and the gradients are unscaled when the range ends (after the
  // data-parallel sync), so clipping and the optimizer see true gradients.
  // completes_step false: a gradient-accumulation micro-batch before the
  // last of its step; its gradients only add up in .grad, so neither the
  // data-parallel sync nor the unscaling happens when its range ends.
  void backward(const at::Tensor& loss, bool completes_step = true);
  // step + zero_grad in its range; with loss scaling a step whose gradients
  // were not finite is skipped and the scale updated.
  void optimizer_step(torch::optim::Optimizer& optimizer);

  void set_gradient_sync(GradientSync* sync) { sync_ = sync; }
  GradientSync* gradient_sync() const { return sync_; }
  void set_grad_scaler(GradScaler* scaler) { scaler_ = scaler; }

  c10::Device device() const { return device_; }
  // The phases' host time since the last take_clock() (the runner takes it
  // after every step, so it holds one step's); resets it.
  PhaseClock take_clock() { return std::exchange(clock_, PhaseClock{}); }
  bool autocast() const { return autocast_dtype_ != c10::ScalarType::Float; }

 private:
  friend class PhaseScope;
  void begin(Phase p);
  void end(Phase p);

  c10::Device device_;
  c10::ScalarType autocast_dtype_;
  std::vector<PhaseListener*> listeners_;
  GradientSync* sync_ = nullptr;
  GradScaler* scaler_ = nullptr;  // fp16 runs only
  PhaseClock clock_;
  bool backward_completes_step_ = true;          // of the backward phase now open (backward())
  std::array<double, kPhaseCount> opened_at_{};  // by phase_index()
};

}  // namespace tbd
