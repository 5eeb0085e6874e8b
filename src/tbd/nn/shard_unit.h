// The wrapping units of fully sharded data parallelism (ZeRO-3, FSDP's
// FULL_SHARD; docs/distributed.md#sharding). A model runs the forward of
// each unit it declares (a transformer block, a residual block) through
// run_unit. With a sharder attached (dist/sharded_data_parallel.h, for
// --sharding full) the unit's parameters hold only this rank's shard
// between uses: run_unit has them gathered just before the unit computes
// and freed after, and ties the output to a backward step that gathers
// them again before the unit's backward. Without one, run_unit is a plain
// call of the forward.
#pragma once

#include <functional>
#include <vector>

#include <torch/types.h>

namespace torch::nn {
class Module;
}

namespace tbd::nn {

class UnitSharder {
 public:
  virtual ~UnitSharder() = default;
  // False: `unit` is not one this sharder holds (another model's).
  virtual bool holds(const torch::nn::Module& unit) const = 0;
  // The unit's parameters are whole when this returns.
  virtual void before_forward(const torch::nn::Module& unit) = 0;
  // Frees them again; returns `output`, tied (when it needs a gradient) to
  // a backward step that gathers them before the unit's backward.
  virtual torch::Tensor after_forward(const torch::nn::Module& unit, const torch::Tensor& output) = 0;
};

// One sharder per process (the training's); nullptr detaches it.
void attach_unit_sharder(UnitSharder* sharder);

// `forward` computes `unit`'s output from the unit's parameters.
torch::Tensor run_unit(const torch::nn::Module& unit, const std::function<torch::Tensor()>& forward);

// The parameters of `unit` that autocast casts to the run's precision
// wherever they are used: the weights of its linear and convolution layers
// (autocast's lower-precision ops). Sharding gathers these in the run's
// precision (FSDP's MixedPrecision param_dtype), so they hold what autocast
// would have cast them to. The rest stay fp32: norms' weights and biases
// (autocast runs norms in fp32), embeddings (a lookup is not cast), and
// the layers' biases, which LibTorch's Linear adds after the matmul, in
// the matmul's output type, where autocast does not cast them.
std::vector<torch::Tensor> parameters_cast_by_autocast(const torch::nn::Module& unit);

}  // namespace tbd::nn
