// DCN-v2's cross network in its low-rank form (Wang et al. 2021, "DCN V2",
// eq. 2 with W = U·V), as TorchRec's LowRankCrossNet builds it for MLPerf's
// DLRMv2: for each layer l,
//   x_{l+1} = x_0 ⊙ (W_l (V_l x_l) + b_l) + x_l
// with V_l: in → rank (no bias), W_l: rank → in, b_l: in. Every layer keeps
// the input's width, so the network explicitly forms feature crosses of
// increasing degree without widening.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/parameterlist.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct LowRankCrossNetConfig {
  int64_t width = 0;   // in = out features
  int64_t layers = 3;  // MLPerf DLRMv2: 3
  int64_t rank = 512;  // MLPerf DLRMv2: 512
};

class LowRankCrossNetImpl : public torch::nn::Module {
 public:
  explicit LowRankCrossNetImpl(const LowRankCrossNetConfig& config);
  torch::Tensor forward(const torch::Tensor& x0);  // [B, width] -> [B, width]

  // Per layer, as TorchRec names them: W [width, rank], V [rank, width], bias [width].
  torch::nn::ParameterList w{nullptr}, v{nullptr}, bias{nullptr};
};
TORCH_MODULE(LowRankCrossNet);

// layers · (2·width·rank + width), without building anything.
int64_t low_rank_cross_net_parameters(const LowRankCrossNetConfig& config);

}  // namespace tbd::nn
