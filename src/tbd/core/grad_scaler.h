// Dynamic loss scaling for fp16 training, torch.amp.GradScaler's algorithm:
// the loss is multiplied by a scale before backward so small fp16 gradients
// do not flush to zero; when backward ends the gradients are divided by it
// again and checked for inf/NaN. A step with non-finite gradients is skipped
// and the scale halves; after `growth_interval` clean steps it doubles.
// Phases applies it (backward, then optimizer_step) when the run is fp16.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace tbd {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16, PyTorch's default
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  // `parameters`: every trainable parameter of the model (their gradients are unscaled).
  GradScaler(std::vector<at::Tensor> parameters, GradScalerOptions options = {});

  at::Tensor scale(const at::Tensor& loss) const;  // loss × scale
  // Divides the gradients by the scale and records whether any is inf/NaN.
  // Idempotent until the next update(): a second call does nothing.
  void unscale();
  // False when this step's gradients were not finite: skip the optimizer step.
  bool step_allowed();
  // Adjusts the scale after a step (taken or skipped) and re-arms unscale().
  void update();

  double current_scale() const;
  int64_t skipped_steps() const { return skipped_; }
  int64_t steps() const { return steps_; }

 private:
  std::vector<at::Tensor> parameters_;
  GradScalerOptions options_;
  at::Tensor scale_, growth_tracker_, found_inf_;
  bool unscaled_ = false;
  int finite_ = -1;  // this step's found-inf verdict read back once: -1 not yet, 0 no, 1 yes
  int64_t skipped_ = 0, steps_ = 0;
};

}  // namespace tbd
